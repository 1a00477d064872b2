"""`just bench-reliability`'s scenarios: stalls, hostile inputs, connection churn, abandoned
episodes and processes left behind."""

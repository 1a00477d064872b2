"""The ORS wire protocol (ors-sdk 0.1.0) in simulation mode."""

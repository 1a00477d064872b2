"""What keeps a server safe to share: request and session limits (`limits`), tokens, Origin and Host
checks (`security`, `principals`), the per-session memory budget (`memory_guard`) and credential
redaction in the access log (`log_redact`)."""

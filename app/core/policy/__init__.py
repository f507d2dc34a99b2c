"""The user's decisions: approval modes, rules, tool sets, which way a change goes."""

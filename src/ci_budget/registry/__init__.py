"""What a test file registers: the AST reading of `register_*_ci(...)` calls and the specs that name registered files. Pure."""

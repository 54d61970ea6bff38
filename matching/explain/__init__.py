"""The matcher, the explanation object it returns, and everything that reads one."""

"""What one module says, as facts the rules read: imports, scopes, loaders, worker starts."""
from flake8_dlworker.analysis.module import ModuleFacts, analyze_module

__all__ = ["ModuleFacts", "analyze_module"]

"""Frameworks that own the DataLoader, as data: which call builds the loader, which of
its arguments set the workers, and which reach them.

- Hugging Face ``Trainer`` builds its loaders from ``TrainingArguments``
  (``dataloader_num_workers``, ``dataloader_persistent_workers``,
  ``dataloader_prefetch_factor``) and pickles ``data_collator`` and the datasets into
  the workers; ``trainer.train()`` / ``evaluate()`` / ``predict()`` start them.
- PyTorch Lightning calls the ``*_dataloader`` hooks of the model or DataModule given
  to ``trainer.fit()`` / ``validate()`` / ``test()`` / ``predict()`` (their DataLoader
  calls are checked as any other) and iterates what they return.
- accelerate's ``prepare`` hands back the loaders it is given (analysis/flow.py).
"""
import ast

from flake8_dlworker.analysis.loaders import literal_int

HF_TRAINERS = frozenset(("transformers.Trainer", "transformers.Seq2SeqTrainer"))
HF_ARGUMENTS = frozenset(("transformers.TrainingArguments",
                          "transformers.Seq2SeqTrainingArguments"))
#: Trainer arguments pickled into every worker, with the role the messages name
HF_SENT = {"data_collator": "data_collator", "train_dataset": "dataset",
           "eval_dataset": "dataset"}
#: TrainingArguments keywords that only mean something with workers
HF_WORKER_OPTIONS = ("dataloader_persistent_workers", "dataloader_prefetch_factor")
HF_RUNS = frozenset(("train", "evaluate", "predict"))

LIGHTNING_TRAINERS = frozenset(("lightning.Trainer", "lightning.pytorch.Trainer",
                                "pytorch_lightning.Trainer"))
LIGHTNING_RUNS = frozenset(("fit", "validate", "test", "predict"))
LIGHTNING_HOOKS = ("train_dataloader", "val_dataloader", "test_dataloader",
                   "predict_dataloader")
#: words that put a framework script through the plugin's prefilter
PREFILTER = ("dataloader_", "_dataloader")
_MAX_DEPTH = 4


def constructed(expr, scope, facts, names, depth=0):
    """(Call, scope) of the ``names`` class ``expr`` is (or is bound to), else None."""
    if depth > _MAX_DEPTH:
        return None
    if isinstance(expr, ast.Call):
        if facts.qualname(expr.func, scope) in names:
            return expr, scope
        return None
    if isinstance(expr, ast.Name):
        for binding in facts.lookup(expr.id, scope):
            if isinstance(binding.value, ast.expr):
                found = constructed(binding.value, binding.scope, facts, names, depth + 1)
                if found is not None:
                    return found
    return None


def hf_training_arguments(trainer, scope, facts):
    """(TrainingArguments Call, scope) a Trainer call was given, else None."""
    given = next((kw.value for kw in trainer.keywords if kw.arg == "args"), None)
    if given is None and len(trainer.args) > 1:
        given = trainer.args[1]
    if given is None:
        return None
    return constructed(given, scope, facts, HF_ARGUMENTS)


def hf_workers(arguments, scope, facts):
    """``dataloader_num_workers`` as an int when known (0 when absent), else None."""
    if any(kw.arg is None for kw in arguments.keywords):
        return None
    for kw in arguments.keywords:
        if kw.arg == "dataloader_num_workers":
            return literal_int(kw.value, scope, facts)
    return 0


def hf_trainer_workers(trainer, scope, facts):
    """The worker count of a Trainer call: None when unknown, 0 when it has none or its
    TrainingArguments cannot be read here (their default is 0)."""
    found = hf_training_arguments(trainer, scope, facts)
    if found is None:
        return 0
    return hf_workers(found[0], found[1], facts)


def hf_sent(trainer, scope, facts):
    """(expression, role) a Trainer call pickles into its workers."""
    if hf_trainer_workers(trainer, scope, facts) == 0:
        return []
    return [(kw.value, HF_SENT[kw.arg]) for kw in trainer.keywords if kw.arg in HF_SENT]


def uses_frameworks(facts):
    """Cheap gate: the module imports transformers or Lightning."""
    scopes = [facts.module] + list(facts.scopes.values())
    return any(target.partition(".")[0] in ("transformers", "lightning", "pytorch_lightning")
               for scope in scopes for target in scope.aliases.values())

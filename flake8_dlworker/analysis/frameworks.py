"""Frameworks that own the DataLoader, as data: which call builds the loader, which of
its arguments set the workers, and which reach them.

- Hugging Face ``Trainer`` builds its loaders from ``TrainingArguments``
  (``dataloader_num_workers``, ``dataloader_persistent_workers``,
  ``dataloader_prefetch_factor``) and pickles ``data_collator`` and the datasets into
  the workers; ``trainer.train()`` / ``evaluate()`` / ``predict()`` start them.
- PyTorch Lightning calls the ``*_dataloader`` hooks of the model or DataModule given
  to ``trainer.fit()`` / ``validate()`` / ``test()`` / ``predict()`` (their DataLoader
  calls are checked as any other) and iterates what they return. With a strategy that
  starts its ranks by spawning (``strategy="ddp_spawn"`` and its
  ``ddp_spawn_find_unused_parameters_*`` names, ``DDPSpawnStrategy()``,
  ``DDPStrategy(start_method="spawn")``), ``fit()`` and its siblings pickle the
  Trainer with everything they were given (the LightningModule, the DataModule, the
  loaders) into every rank; plain ``ddp`` starts the ranks as new runs of the script
  and pickles nothing, ``ddp_fork`` / ``ddp_notebook`` fork them.
- accelerate's ``prepare`` hands back the loaders it is given (analysis/flow.py).
"""
import ast

from flake8_dlworker.analysis.loaders import literal, literal_int

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
#: the Lightning packages, whose strategy classes are named the same in each
LIGHTNING_PACKAGES = ("lightning", "pytorch_lightning")
#: the start methods with which a Lightning strategy pickles the Trainer into its ranks
_PICKLING_STARTS = ("spawn", "forkserver")
#: the parameters of the Trainer's runs that are pickled under a spawning strategy,
#: by position after ``model`` (``fit(model, train_dataloaders, val_dataloaders,
#: datamodule)``, ``validate(model, dataloaders, ...)``, ``predict(model, dataloaders,
#: datamodule)``)
_RUN_PARAMETERS = {
    "fit": ("model", "train_dataloaders", "val_dataloaders", "datamodule"),
    "validate": ("model", "dataloaders"),
    "test": ("model", "dataloaders"),
    "predict": ("model", "dataloaders", "datamodule"),
}
_RUN_SENT = frozenset(("model", "train_dataloaders", "val_dataloaders", "dataloaders",
                       "datamodule"))
#: words that put a framework script through the plugin's prefilter
PREFILTER = ("dataloader_", "_dataloader", "ddp_spawn", "DDPSpawn", "start_method")
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


def lightning_spawns(trainer, scope, facts):
    """True when a Lightning Trainer call's strategy starts the ranks by spawning them
    (``accelerator=`` and ``distributed_backend=`` took the strategy's name in
    Lightning 1.x)."""
    return any(kw.arg in ("strategy", "accelerator", "distributed_backend")
               and _spawning_strategy(kw.value, scope, facts) for kw in trainer.keywords)


def _spawning_strategy(expr, scope, facts, depth=0):
    name = literal(expr, scope, facts)
    if isinstance(name, str):
        return name.startswith("ddp_spawn")
    if depth > _MAX_DEPTH:
        return False
    if isinstance(expr, ast.Name):
        return any(isinstance(b.value, ast.expr)
                   and _spawning_strategy(b.value, b.scope, facts, depth + 1)
                   for b in facts.lookup(expr.id, scope))
    if not isinstance(expr, ast.Call):
        return False
    package, _, cls = (facts.qualname(expr.func, scope) or "").rpartition(".")
    if package.partition(".")[0] not in LIGHTNING_PACKAGES:
        return False
    if cls.startswith("DDPSpawn"):  # DDPSpawnStrategy, DDPSpawnShardedStrategy (1.x)
        return True
    start = next((kw.value for kw in expr.keywords if kw.arg == "start_method"), None)
    return cls == "DDPStrategy" and start is not None and \
        literal(start, scope, facts) in _PICKLING_STARTS


def lightning_sent(call, scope, facts):
    """(expression, role) that a Lightning Trainer's ``fit()`` / ``validate()`` /
    ``test()`` / ``predict()`` call pickles into its ranks: all it is given, when the
    Trainer's strategy spawns them; [] for other calls."""
    func = call.func
    if not isinstance(func, ast.Attribute) or func.attr not in _RUN_PARAMETERS:
        return []
    trainer = constructed(func.value, scope, facts, LIGHTNING_TRAINERS)
    if trainer is None or not lightning_spawns(*trainer, facts):
        return []
    given = []
    for name, arg in zip(_RUN_PARAMETERS[func.attr], call.args):
        if isinstance(arg, ast.Starred):
            break
        given.append((name, arg))
    given += [(kw.arg, kw.value) for kw in call.keywords if kw.arg in _RUN_SENT]
    return [(value, "the %s given to Trainer.%s with the ddp_spawn strategy"
             % (name, func.attr)) for name, value in given]


def uses_frameworks(facts):
    """Cheap gate: the module imports transformers or Lightning."""
    scopes = [facts.module] + list(facts.scopes.values())
    return any(target.partition(".")[0] in ("transformers", "lightning", "pytorch_lightning")
               for scope in scopes for target in scope.aliases.values())

"""The static rules on distributed training (issue 40): the ranks that
``torch.multiprocessing.spawn`` and a Lightning Trainer with a spawning strategy start
receive their function, args, model and DataModule by pickling, as workers do, and
re-import the script; plain ``ddp`` does neither."""
import ast
import json
import textwrap

import pytest

from flake8_dlworker.analysis import frameworks
from flake8_dlworker.analysis.module import analyze_module
from flake8_dlworker.plugin import findings
from tiers import run_python


def _found(source, start_method="spawn"):
    tree = ast.parse(textwrap.dedent(source))
    return sorted((f.line, f.code) for f in findings(tree, "train.py", start_method))


SPAWN_HEADER = """\
import functools
import multiprocessing
import time
import torch
import torch.multiprocessing as mp
from torch.multiprocessing import spawn, start_processes


def run(rank, *args):
    print(rank, args)


def scale(x, factor):
    return x * factor


def timed(fn):
    def wrapper(*args):
        start = time.time()
        fn(*args)
        print(time.time() - start)
    return wrapper


@timed
def timed_run(rank):
    print(rank)


def main():
    def nested(rank):
        print(rank)

"""

#: one statement in main(), at line 34 of SPAWN_HEADER + it, and what it reports there
SPAWN_CASES = {
    "lambda as fn": ("mp.spawn(lambda rank: None, nprocs=2)", ["DLW102"]),
    "lambda in args": ("mp.spawn(run, args=(lambda x: x,), nprocs=2)", ["DLW102"]),
    "lambda in positional args": ("spawn(run, (2, lambda x: x), 2)", ["DLW102"]),
    "nested fn": ("torch.multiprocessing.spawn(nested, nprocs=2)", ["DLW103"]),
    "nested fn in args": ("mp.spawn(run, args=(2, nested), nprocs=2)", ["DLW103"]),
    "partial of nested fn in args": (
        "mp.spawn(run, args=(functools.partial(nested),), nprocs=2)", ["DLW103"]),
    "decorator without wraps": ("mp.spawn(timed_run, nprocs=2)", ["DLW103"]),
    "start_processes spawn": (
        "start_processes(run, args=(nested,), nprocs=2, start_method='spawn')", ["DLW103"]),
    "start_processes by default": ("start_processes(run, args=(nested,))", ["DLW103"]),
    "start_processes forkserver": (
        "start_processes(nested, nprocs=2, start_method='forkserver')", ["DLW103"]),
    "spawn context Process": (
        "multiprocessing.get_context('spawn').Process(target=run, args=(0, nested)).start()",
        ["DLW103"]),
    "mp.spawn ignores start_method": (
        "mp.spawn(nested, nprocs=2, start_method='fork')", ["DLW103"]),
    # clean twins
    "module-level fn and values": ("mp.spawn(run, args=(2, 'gloo'), nprocs=2)", []),
    "partial of a module-level fn in args": (
        "mp.spawn(run, args=(functools.partial(scale, factor=2),), nprocs=2)", []),
    "start_processes fork": (
        "start_processes(run, args=(nested,), nprocs=2, start_method='fork')", []),
    "fork context Process": (
        "multiprocessing.get_context('fork').Process(target=nested).start()", []),
}


@pytest.mark.parametrize("case", sorted(SPAWN_CASES))
def test_spawned_ranks_receive_fn_and_args_by_pickling(case):
    statement, codes = SPAWN_CASES[case]
    source = SPAWN_HEADER + "    %s\n\n\nif __name__ == '__main__':\n    main()\n" % statement
    assert source.splitlines()[33].strip() == statement
    assert _found(source) == [(34, code) for code in codes]


def test_fork_option_keeps_its_meaning_for_spawned_ranks():
    """``--dlw-start-method fork`` silences the pickling rules, as it does for loaders."""
    source = SPAWN_HEADER + "    mp.spawn(nested, nprocs=2)\n"
    assert _found(source, "fork") == []


UNGUARDED = {
    "mp.spawn": ("mp.spawn(run, nprocs=2)", ["DLW101"]),
    "start_processes": ("torch.multiprocessing.start_processes(run, nprocs=2)", ["DLW101"]),
    "start_processes fork": (
        "torch.multiprocessing.start_processes(run, nprocs=2, start_method='fork')", []),
}


@pytest.mark.parametrize("case", sorted(UNGUARDED))
def test_an_unguarded_spawn_is_dlw101(case):
    statement, codes = UNGUARDED[case]
    source = "import torch.multiprocessing as mp\nimport torch\n\n\n" \
             "def run(rank):\n    print(rank)\n\n\n%s\n" % statement
    assert _found(source) == [(9, code) for code in codes]
    guarded = source.replace(statement, "if __name__ == '__main__':\n    " + statement)
    assert _found(guarded) == []


LIGHTNING = """\
import lightning as L
import pytorch_lightning as pl
from lightning.pytorch.strategies import DDPStrategy
from pytorch_lightning.strategies import DDPSpawnStrategy
from torch.utils.data import DataLoader


class Model(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.loss_fn = lambda out: out.pow(2).mean()


def main(kind):
    trainer = {trainer}
    trainer.{run}


if __name__ == "__main__":
    main("ddp")
"""

#: (Trainer call, whether it spawns its ranks)
STRATEGIES = {
    'pl.Trainer(strategy="ddp_spawn", accelerator="cpu", devices=2)': True,
    'pl.Trainer(strategy="ddp_spawn_find_unused_parameters_false")': True,
    'pl.Trainer(strategy="ddp_spawn_find_unused_parameters_true")': True,
    'L.Trainer(strategy=DDPSpawnStrategy())': True,
    'L.Trainer(strategy=DDPStrategy(start_method="spawn"))': True,
    'L.Trainer(strategy=L.pytorch.strategies.DDPStrategy(start_method="forkserver"))': True,
    'pl.Trainer(accelerator="ddp_spawn", gpus=2)': True,  # Lightning 1.x spelling
    'pl.Trainer(strategy="ddp", accelerator="gpu", devices=2)': False,
    'pl.Trainer(strategy="ddp_find_unused_parameters_true")': False,
    'pl.Trainer(strategy="ddp_fork")': False,
    'pl.Trainer(strategy="ddp_notebook")': False,
    'L.Trainer(strategy=DDPStrategy())': False,
    'L.Trainer(strategy=DDPStrategy(start_method="fork"))': False,
    'L.Trainer(strategy=kind)': False,
    'L.Trainer(devices=2)': False,
}


@pytest.mark.parametrize("trainer", sorted(STRATEGIES))
def test_a_spawning_lightning_strategy_pickles_the_model(trainer):
    source = LIGHTNING.format(trainer=trainer, run="fit(Model())")
    assert _found(source) == ([(11, "DLW102")] if STRATEGIES[trainer] else [])


@pytest.mark.parametrize("run", [
    "fit(Model())", "fit(model=Model())", "validate(Model())", "test(model=Model())",
    "predict(Model())", "fit(None, None, None, Model())", "fit(datamodule=Model())",
])
def test_every_run_and_argument_of_the_trainer_is_pickled(run):
    source = LIGHTNING.format(trainer='pl.Trainer(strategy="ddp_spawn")', run=run)
    assert _found(source) == [(11, "DLW102")]


def test_a_loader_without_workers_handed_to_ddp_spawn_is_pickled_with_it():
    """A loader with workers is checked where it is built; one without workers given to
    a spawning Trainer is pickled into the ranks, its collate_fn with it."""
    run = "fit(Model(), train_dataloaders=DataLoader([1, 2], collate_fn=lambda b: b))"
    spawn = LIGHTNING.format(trainer='pl.Trainer(strategy="ddp_spawn")', run=run)
    assert _found(spawn) == [(11, "DLW102"), (16, "DLW102")]
    ddp = LIGHTNING.format(trainer='pl.Trainer(strategy="ddp")', run=run)
    assert _found(ddp) == []


def test_nested_definitions_stored_on_the_model_are_reported_where_stored():
    source = textwrap.dedent("""\
        import pytorch_lightning as pl


        class Model(pl.LightningModule):
            def __init__(self):
                super().__init__()

                def norm(x):
                    return x

                class Head:
                    pass

                self.norm = norm
                self.head = Head()


        def main():
            class Local:
                pass

            trainer = pl.Trainer(strategy="ddp_spawn")
            model = Model()
            model.extra = 1
            trainer.fit(model, datamodule=Local())


        if __name__ == "__main__":
            main()
    """)
    assert _found(source) == [(14, "DLW103"), (15, "DLW103"), (25, "DLW103")]
    assert _found(source.replace('"ddp_spawn"', '"ddp"')) == []


def test_an_unguarded_ddp_spawn_fit_is_dlw101_and_a_ddp_fit_is_not():
    source = textwrap.dedent("""\
        import pytorch_lightning as pl

        from models import Model

        trainer = pl.Trainer(strategy="ddp_spawn", devices=2)
        trainer.fit(Model())
    """)
    assert _found(source) == [(6, "DLW101")]
    assert _found(source.replace('"ddp_spawn"', '"ddp"')) == []


_REGISTRY = """\
import json
from pytorch_lightning.strategies import StrategyRegistry
print(json.dumps({name: entry["init_params"].get("start_method")
                  for name, entry in StrategyRegistry.items()}))
"""


def test_the_strategy_names_that_spawn_are_lightnings_own():
    """Every strategy Lightning registers under a name: those it starts with spawn or
    forkserver are the ones the rules call spawning."""
    pytest.importorskip("pytorch_lightning")
    out = run_python(["-c", _REGISTRY], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    registry = json.loads(out.stdout.splitlines()[-1])
    assert "ddp_spawn" in registry
    for name, start_method in registry.items():
        tree = ast.parse("import lightning\nt = lightning.Trainer(strategy=%r)\n" % name)
        facts = analyze_module(tree, "train.py")
        call = tree.body[1].value
        assert frameworks.lightning_spawns(call, facts.module, facts) == (
            start_method in ("spawn", "forkserver")), name


# -- DLW112: a DistributedSampler never told the epoch ------------------------------------

SAMPLER_HEADER = """\
import torch
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler
from tqdm import tqdm
from training import train_one_epoch


def local_train(loader, epoch):
    for batch in loader:
        print(epoch, batch)


def main(args, dataset):
    sampler = DistributedSampler(dataset, shuffle=args.shuffle)
    loader = DataLoader(dataset, batch_size=4, sampler=sampler)
"""

#: the epoch loop of main(), and whether the sampler (line 14) is reported
SAMPLER_CASES = {
    "a non-literal shuffle may shuffle": (
        "for epoch in range(args.epochs):\n    local_train(loader, epoch)", True),
    "a tqdm over range is an epoch loop": (
        "for epoch in tqdm(range(3)):\n    for batch in loader:\n        print(batch)", True),
    "the loader handed to another module's function": (
        "for epoch in range(3):\n    train_one_epoch(loader, epoch)", True),
    "the sampler handed to another module's function": (
        "for epoch in range(3):\n    train_one_epoch(loader, epoch, sampler)", False),
    "set_epoch through the loader": (
        "for epoch in range(3):\n    loader.sampler.set_epoch(epoch)\n"
        "    local_train(loader, epoch)", False),
    "set_epoch under a condition": (
        "for epoch in range(3):\n    if args.distributed:\n        sampler.set_epoch(epoch)\n"
        "    local_train(loader, epoch)", False),
    "a loop over the batches only": (
        "for batch in loader:\n    print(batch)", False),
    "an epoch loop that never uses the loader": (
        "for epoch in range(3):\n    print(epoch)", False),
}


@pytest.mark.parametrize("case", sorted(SAMPLER_CASES))
def test_a_distributed_sampler_without_set_epoch_in_the_epoch_loop(case):
    loop, reported = SAMPLER_CASES[case]
    source = SAMPLER_HEADER + textwrap.indent(loop, "    ") + "\n"
    assert _found(source) == ([(14, "DLW112")] if reported else []), source

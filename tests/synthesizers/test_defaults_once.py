"""A default is written once: in the constructor, or in the YAML for an argument without one.

Every shipped synthesizer config sets only what differs from its class's constructor; a preset sets
only what differs from the file; the resolved config still names every effective argument (the
constructor's defaults are filled in), so a cell's recorded config and digest say what it ran with.
The metrics configs follow the same rule (a family's options that differ from its constructor)."""

from __future__ import annotations

import pytest
from holdbench.benchmark.config import (
    COST_KEY,
    PRESET_KEY,
    VARIANTS_KEY,
    ConfigError,
    _locate,
    _same_value,
    config_files,
    constructor_defaults,
    group_config,
    repeated_defaults,
    synthesizer_config,
)


@pytest.fixture(autouse=True)
def _shipped_only(monkeypatch):
    monkeypatch.delenv("HOLDBENCH_CONFIG_PATH", raising=False)
    monkeypatch.delenv("HOLDBENCH_CONF_DIR", raising=False)


SYNTH_FILES = config_files("synthesizer")


def _file(stem: str) -> tuple[dict, type, dict]:
    raw = group_config("synthesizer", stem)
    cls = _locate(raw["_target_"])
    written = {k: v for k, v in raw.items() if k not in (COST_KEY, PRESET_KEY, VARIANTS_KEY)}
    return raw, cls, written


@pytest.mark.parametrize("stem", SYNTH_FILES)
def test_a_synthesizer_config_does_not_repeat_its_constructors_defaults(stem):
    _raw, cls, written = _file(stem)
    repeated = repeated_defaults(cls, written)
    assert not repeated, (f"conf/synthesizer/{stem}.yaml repeats {cls.__name__}'s defaults for {repeated}: "
                          "remove them (the constructor holds them)")


@pytest.mark.parametrize("stem", SYNTH_FILES)
def test_a_preset_sets_only_what_differs_from_the_file(stem):
    raw, cls, written = _file(stem)
    effective = {**constructor_defaults(cls), **written}
    for preset, values in (raw.get(PRESET_KEY) or {}).items():
        same = sorted(k for k, v in (values or {}).items() if k in effective and _same_value(v, effective[k]))
        assert not same, f"conf/synthesizer/{stem}.yaml, preset {preset!r}: {same} already have these values"


def test_every_synthesizer_and_variant_resolves_with_every_constructor_argument():
    import inspect

    from holdbench.benchmark.config import available

    for name in available("synthesizer"):
        cfg = synthesizer_config(name)
        cls = _locate(cfg["_target_"])
        params = inspect.signature(cls.__init__).parameters
        missing = sorted(k for k, p in params.items()
                         if k != "self" and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD) and k not in cfg
                         and k in constructor_defaults(cls))
        assert not missing, f"{name}: resolved config lacks {missing}"


def test_the_constructor_default_is_filled_in_and_overridable():
    cfg = synthesizer_config("ctgan")
    assert cfg["epochs"] == 300 and cfg["generator_dim"] == [256, 256]  # SDV's defaults, from the class
    assert synthesizer_config("ctgan", "smoke")["epochs"] == 2
    assert synthesizer_config("ctgan", params={"pac": 5, "batch_size": 100})["pac"] == 5
    assert synthesizer_config("ctgan", overrides=["epochs=7"])["epochs"] == 7
    with pytest.raises(ConfigError, match=r"unknown parameter\(s\) \['epoch'\]"):
        synthesizer_config("ctgan", params={"epoch": 5})
    with pytest.raises(ConfigError, match=r"unknown override\(s\) \['epoch'\]"):
        synthesizer_config("ctgan", overrides=["epoch=7"])
    with pytest.raises(ConfigError, match="epochs.*must be int"):
        synthesizer_config("ctgan", overrides=["epochs=many"])


def test_repeated_defaults_compares_values_as_a_config_holds_them():
    class C:
        def __init__(self, a: int = 1, b: float = 0.5, flag: bool = True, dims=(2, 3), req=None, *, obj=object):
            pass

    assert repeated_defaults(C, {"a": 1.0, "b": 0.5, "flag": True, "dims": [2, 3], "req": None}) == \
        ["a", "b", "dims", "flag", "req"]
    assert repeated_defaults(C, {"a": True, "b": 0.25, "flag": 1, "dims": [2, 4]}) == []
    assert constructor_defaults(C) == {"a": 1, "b": 0.5, "flag": True, "dims": [2, 3], "req": None}


@pytest.mark.parametrize("name", config_files("metrics"))
def test_a_metrics_config_sets_only_options_that_differ_from_the_family(name):
    cfg = group_config("metrics", name)
    for family, options in (cfg.get("families") or {}).items():
        if options is None:
            continue
        cls = _locate(options["_target_"])
        repeated = repeated_defaults(cls, {k: v for k, v in options.items() if k != "_target_"})
        assert not repeated, f"conf/metrics/{name}.yaml, family {family!r}: {repeated} repeat the defaults"

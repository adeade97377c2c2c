"""Hydra compose helpers: the one place configs are read, merged and checked.

Snakemake owns output paths, so Hydra is used through its compose API only. Every
check here runs before a job starts and names the offending key.

Where configs are found: the shipped tree `conf/` (or, for tests and forks, the tree named by
`HOLDBENCH_CONF_DIR`, which replaces it), then every directory of the config search path
`HOLDBENCH_CONFIG_PATH` (`dir1:dir2`, as PATH; `holdbench ... --config-dir DIR` adds to it). A
directory of the search path is laid out like conf/ (`dataset/`, `synthesizer/`, `metrics/`, `study/`,
`gates/`); its files join the shipped ones. A name defined in two places is refused with both
files named: nothing shadows anything, so a name always means one file.
"""

from __future__ import annotations

import collections.abc
import inspect
import os
import re
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # hydra and omegaconf are imported by the functions that use them (~0.2 s a process)
    from omegaconf import DictConfig

REPO_ROOT = Path(__file__).resolve().parents[1]
#: names of datasets, synthesizers and studies become path parts: keep them tame
NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
PRESET_KEY = "presets"


class ConfigError(ValueError):
    """A config is invalid; the message names the file or key."""


def did_you_mean(names: Iterable[str], known: Iterable[str]) -> str:
    """' (did you mean ...?)' naming the known names closest to the unknown `names` (difflib), or ''."""
    import difflib

    known = [str(k) for k in known]
    close = list(dict.fromkeys(m for n in names for m in difflib.get_close_matches(str(n), known, n=2, cutoff=0.7)))
    return f" (did you mean {' or '.join(repr(m) for m in close)}?)" if close else ""


#: replaces the shipped conf/ tree (the one with config.yaml); for tests and forks
CONF_DIR_ENV = "HOLDBENCH_CONF_DIR"
#: directories laid out like conf/ whose configs join the shipped ones (os.pathsep-separated, as PATH)
CONFIG_PATH_ENV = "HOLDBENCH_CONFIG_PATH"
#: the config groups a search-path directory may hold
GROUPS = ("dataset", "synthesizer", "metrics", "study", "gates")


def conf_dir() -> Path:
    """The shipped config tree (conf/, holding config.yaml), or the one HOLDBENCH_CONF_DIR names."""
    return Path(os.environ.get(CONF_DIR_ENV, REPO_ROOT / "conf")).resolve()


def user_config_dirs() -> list[Path]:
    """The directories of the config search path (HOLDBENCH_CONFIG_PATH), each checked: it exists and
    holds at least one group folder (a directory laid out like conf/, not conf/dataset/ itself)."""
    out: list[Path] = []
    for entry in os.environ.get(CONFIG_PATH_ENV, "").split(os.pathsep):
        if not entry.strip():
            continue
        path = Path(os.path.expanduser(entry.strip())).resolve()
        if not path.is_dir():
            raise ConfigError(f"{CONFIG_PATH_ENV}: {entry!r} is not a directory")
        if not any((path / g).is_dir() for g in GROUPS):
            hint = f" (it is itself the {path.name}/ folder: give its parent)" if path.name in GROUPS else ""
            raise ConfigError(f"{CONFIG_PATH_ENV}: {path} holds none of the group folders "
                              f"{', '.join(g + '/' for g in GROUPS)}: lay it out like conf/{hint}")
        if path != conf_dir() and path not in out:
            out.append(path)
    return out


def search_path() -> list[Path]:
    """Every config tree, the shipped one first."""
    return [conf_dir(), *user_config_dirs()]


def config_index(group: str) -> dict[str, Path]:
    """name -> file of every config of a group (<tree>/<group>/<name>.yaml over the search path);
    a name found in two trees is a ConfigError naming both files."""
    out: dict[str, Path] = {}
    for tree in search_path():
        for path in sorted((tree / group).glob("*.yaml")):
            if path.stem in out:
                raise ConfigError(f"{group} {path.stem!r} is defined twice: {out[path.stem]} and {path}; "
                                  "a name must mean one file (rename one of them; a config may extend "
                                  "another through `defaults: [<name>, _self_]`)")
            out[path.stem] = path
    return out


def config_file(group: str, name: str) -> Path:
    """The file of a config (where it would be in conf/ when it does not exist: for messages)."""
    return config_index(group).get(name, conf_dir() / group / f"{name}.yaml")


def config_source(group: str, name: str) -> str:
    """Which file a config (or, for a synthesizer, a variant) came from, as recorded with a cell's
    results: relative to the repository for the shipped files, absolute for the user's own."""
    stem = variant_index(group).get(name, name) if group == "synthesizer" else name
    path = config_file(group, stem)
    try:
        return str(path.relative_to(REPO_ROOT))
    except ValueError:
        return str(path)


def _where(group: str) -> str:
    """The directories a group's configs are read from, for messages."""
    return ", ".join(str(t / group) for t in search_path())


def check_name(kind: str, name: str) -> str:
    """Reject names that could escape results/ or break paths ('../x', 'a/b', '')."""
    if not isinstance(name, str) or not NAME_RE.match(name) or ".." in name:
        raise ConfigError(
            f"{kind} name {name!r} is not allowed: use letters, digits, '_', '-' and '.' "
            "(no path separators, no '..')"
        )
    return name


VARIANTS_KEY = "variants"
VARIANT_TOKEN = "{variant}"
#: a synthesizer YAML's optional `cost:` (cheap, moderate or expensive; benchmark/schemas/synthesizer.schema.yaml):
#: not a constructor argument, a scheduling hint (the workflow runs cheaper cells first)
COST_KEY = "cost"
DEFAULT_COST = "moderate"


def config_files(group: str) -> list[str]:
    """Stems of the YAML files of a group (<tree>/<group>/*.yaml over the search path)."""
    return sorted(config_index(group))


def variant_index(group: str) -> dict[str, str]:
    """variant name -> the file that declares it under `variants:` (synthesizer configs)."""
    import yaml

    out: dict[str, str] = {}
    files = config_index(group)
    for stem, path in files.items():
        try:
            raw = yaml.safe_load(path.read_text()) or {}
        except (OSError, yaml.YAMLError) as exc:
            raise ConfigError(f"{path}: not valid YAML: {_one_line(exc)}") from None
        variants = raw.get(VARIANTS_KEY) if isinstance(raw, dict) else None
        if variants is None:
            continue
        if not isinstance(variants, dict) or not variants:
            raise ConfigError(f"{path}: `{VARIANTS_KEY}` must map variant names to settings or to a "
                              f"value for {VARIANT_TOKEN}")
        for v in variants:
            check_name(group, str(v))
            if str(v) in out or str(v) in files:
                also = files[out[str(v)]] if str(v) in out else files[str(v)]
                raise ConfigError(f"{path}: variant {v!r} is declared twice (also {also})")
            out[str(v)] = stem
    return out


def available(group: str) -> list[str]:
    """Names a study may use: config files without variants, and every declared variant."""
    variants = variant_index(group) if group == "synthesizer" else {}
    return sorted(set(config_files(group)) - set(variants.values()) | set(variants))


def split_overrides(text: str) -> list[str]:
    """Split "a=1,b=[x,y],c={k: v}" at the commas that are not inside brackets or quotes."""
    parts, depth, quote, cur = [], 0, None, ""
    for ch in text:
        if quote:
            quote = None if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch in "[{(":
            depth += 1
        elif ch in "]})":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
            continue
        cur += ch
    parts.append(cur)
    return [p.strip() for p in parts if p.strip()]


def load_group(group: str, name: str, overrides: Iterable[str] = (), add_keys: bool = False) -> DictConfig:
    """Compose conf/<group>/<name>.yaml with dotted overrides (`key=value`), struct mode on.

    With add_keys, an override may also add a key the YAML does not set (the caller then
    checks the keys itself); otherwise an unknown key is an error naming it.
    """
    check_name(group, name)
    if name not in config_files(group):
        declared = variant_index(group).get(name) if group == "synthesizer" else None
        if declared is not None:  # a variant has no file of its own: its settings are merged by synthesizer_config
            raise ConfigError(f"synthesizer {name!r} is a variant declared under `{VARIANTS_KEY}:` in {declared}.yaml, "
                              f"not a config file: resolve it with synthesizer_config({name!r})")
        known = available(group)
        raise ConfigError(
            f"unknown {group} {name!r}{did_you_mean([name], known)}: no {name}.yaml in {_where(group)} "
            f"(known: {', '.join(known)})"
        )
    from hydra import compose, initialize_config_dir
    from hydra.errors import HydraException
    from omegaconf.errors import OmegaConfBaseException

    prefix = "++" if add_keys else ""
    ovr = [f"+{group}={name}"] + [f"{prefix}{group}.{o}" for o in overrides]
    users = user_config_dirs()
    if users:  # the user's trees join Hydra's search path (names are unique: config_index checked)
        ovr.append("hydra.searchpath=[" + ",".join(_quoted(f"file://{d}") for d in users) + "]")
    try:
        with initialize_config_dir(config_dir=str(conf_dir()), version_base="1.3"):
            cfg = compose(config_name="config", overrides=ovr)
    except (HydraException, OmegaConfBaseException) as exc:
        raise ConfigError(f"{group} {name!r}: {_one_line(exc)}") from exc
    return cfg[group]


def _quoted(text: str) -> str:
    """A Hydra override value quoted (a path may hold commas, spaces or brackets)."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


_SCHEMA_DIR = Path(__file__).resolve().parent / "schemas"


def validate_config(group: str, name: str, cfg: dict) -> None:
    """Check a resolved config against benchmark/schemas/<group>.schema.yaml: an unknown key,
    a wrong type or an out-of-range value is a ConfigError naming the file and the key."""
    import jsonschema
    import yaml

    schema = yaml.safe_load((_SCHEMA_DIR / f"{group}.schema.yaml").read_text())
    errors = sorted(jsonschema.Draft202012Validator(schema).iter_errors(cfg), key=lambda e: list(e.path))
    if not errors:
        return
    err = errors[0]
    where = f"{config_file(group, name)}"
    key = ".".join(str(p) for p in err.path)
    if err.validator == "additionalProperties":
        extra = sorted(set(err.instance) - set(err.schema.get("properties") or {}))
        known = sorted(err.schema.get("properties") or {})
        raise ConfigError(f"{where}: unknown key(s) {extra}{' under ' + key if key else ''}{did_you_mean(extra, known)} "
                          f"(known: {known})")
    raise ConfigError(f"{where}: `{key or '(top level)'}`: {err.message}")


def check_argument_types(where: str, cls: type, cfg: dict) -> None:
    """Values of a config against the constructor's annotations (int, float, bool, str, None, list,
    dict and unions of them; other annotations are not checked)."""
    import typing

    try:
        hints = typing.get_type_hints(cls.__init__)
    except Exception:  # noqa: BLE001 - an annotation we cannot resolve is simply not checked
        return
    for key, value in cfg.items():
        if key.startswith("_") or key not in hints:
            continue
        if not _fits(value, hints[key]):
            raise ConfigError(f"{where}: `{key}` must be {_type_text(hints[key])}, got {value!r}")


def _fits(value: Any, hint: Any) -> bool:
    import math
    import types
    import typing

    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        return any(_fits(value, h) for h in typing.get_args(hint))
    if hint is type(None):
        return value is None
    if hint is bool:
        return isinstance(value, bool)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if hint is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    if hint is str:
        return isinstance(value, str)
    if hint in (list, tuple) or origin in (list, tuple, collections.abc.Sequence):
        return isinstance(value, (list, tuple))
    if hint is dict or origin in (dict, collections.abc.Mapping):
        return isinstance(value, dict)
    return True  # Any, Literal, classes: not checked here


def _type_text(hint: Any) -> str:
    return str(hint).replace("typing.", "").replace("<class '", "").replace("'>", "")


def _one_line(exc: Exception) -> str:
    return " ".join(str(exc).split())


def to_container(cfg: DictConfig) -> dict[str, Any]:
    from omegaconf import OmegaConf

    return OmegaConf.to_container(cfg, resolve=True)  # type: ignore[return-value]


def group_config(group: str, name: str, overrides: Iterable[str] = (), add_keys: bool = False) -> dict[str, Any]:
    """conf/<group>/<name>.yaml resolved to plain containers: `to_container(load_group(...))`.

    Without overrides, a file whose defaults list names only files of its own group and
    `_self_`, and whose values are plain (no interpolation, no text YAML and OmegaConf could
    read differently), is read directly: the same dict as Hydra's compose, without Hydra's
    ~0.4 s. Anything else goes through Hydra.
    """
    if not overrides:
        check_name(group, name)
        plain = _plain_config(group, name, ())
        if plain is not None:
            return plain
    return to_container(load_group(group, name, overrides, add_keys))


_SELF = "_self_"
_DEFAULTS = "defaults"
#: a text starting like this may be a number, a date or a special float to OmegaConf's YAML loader
_NUMBERISH = re.compile(r"^[-+.0-9]")


def _plain_config(group: str, name: str, seen: tuple[str, ...]) -> dict[str, Any] | None:
    """Hydra's composition of a plain group config (defaults merged in order, mappings merged
    key by key, any other value replacing), or None when it is not plain."""
    import yaml

    path = config_index(group).get(name)
    if name in seen or path is None or not path.is_file():
        return None
    try:
        raw = yaml.load(path.read_text(), Loader=_unique_key_loader())  # a SafeLoader refusing duplicate keys
    except (OSError, yaml.YAMLError):
        return None  # Hydra reports it (OmegaConf refuses duplicate keys too)
    raw = {} if raw is None else raw
    if not isinstance(raw, dict) or not _is_plain(raw):
        return None
    defaults = raw.pop(_DEFAULTS, [_SELF])
    if not isinstance(defaults, list) or defaults.count(_SELF) != 1 \
            or not all(isinstance(d, str) and (d == _SELF or NAME_RE.match(d)) for d in defaults):
        return None
    out: dict[str, Any] = {}
    for entry in defaults:
        part = raw if entry == _SELF else _plain_config(group, entry, (*seen, name))
        if part is None:
            return None
        out = _merged(out, part)
    return out


def _unique_key_loader() -> type:
    import yaml

    class Loader(yaml.SafeLoader):
        def construct_mapping(self, node, deep=False):
            keys = [k.value for k, _ in node.value]
            if len(keys) != len(set(keys)):
                raise yaml.constructor.ConstructorError(None, None, "duplicate key", node.start_mark)
            return super().construct_mapping(node, deep=deep)
    return Loader


def _is_plain(value: Any) -> bool:
    if isinstance(value, dict):
        return all(isinstance(k, str) and _is_plain(v) for k, v in value.items())
    if isinstance(value, list):
        return all(_is_plain(v) for v in value)
    if isinstance(value, str):
        return "${" not in value and not _NUMBERISH.match(value) and value.lower() not in (".inf", ".nan")
    return value is None or isinstance(value, (bool, int, float))


def _merged(base: dict, over: dict) -> dict:
    """OmegaConf.merge of two plain mappings: keys in first-seen order, mappings merged, the rest replaced."""
    out = dict(base)
    for key, value in over.items():
        out[key] = _merged(out[key], value) if isinstance(out.get(key), dict) and isinstance(value, dict) \
            else value
    return out


def synthesizer_config(name: str, preset: str | None = None, overrides: Iterable[str] = (),
                       params: dict | None = None) -> dict:
    """The resolved constructor config of a synthesizer, preset merged in and checked: every
    effective constructor argument, whether the YAML sets it or the constructor's default does.

    A synthesizer YAML holds `_target_`, the constructor arguments that differ from the
    constructor's defaults (a default is written once: in the constructor, or in the YAML for an
    argument without one; `repeated_defaults`), optional `presets: {smoke: {arg: value}}` and
    optional `variants:` — named cells made from the one file, each either a mapping of arguments
    (flip10: {p: 0.1}) or a value that replaces `{variant}` in the file's string arguments
    (published_ctgan: ctgan). A file with variants is used through them only. Overrides are
    `arg=value` strings; `params` (a study's `params:` for this synthesizer) are values set last,
    over the preset and the variant. The constructor's plain defaults (`constructor_defaults`) are
    filled in first, so the recorded config (and its digest) names every value the cell ran with,
    and a changed default recomputes the cells it changes.
    """
    params = dict(params or {})
    stem = variant_index("synthesizer").get(name, name)
    cfg = to_container(load_group("synthesizer", stem, overrides, add_keys=True))
    validate_config("synthesizer", stem, cfg)
    cfg.pop(COST_KEY, None)
    variants = cfg.pop(VARIANTS_KEY, None)
    presets = cfg.pop(PRESET_KEY, None) or {}
    cls = synthesizer_class(name, cfg)
    cfg = {**constructor_defaults(cls), **cfg}
    written = set(group_config("synthesizer", stem)) - {COST_KEY, PRESET_KEY, VARIANTS_KEY} if overrides else set(cfg)
    accepted = written | _argument_names(cls)
    overridden = {o.split("=", 1)[0].lstrip("+~").split(".", 1)[0] for o in overrides}
    unknown = sorted(overridden - accepted)
    if unknown:  # also for a class taking **kwargs: an override names an argument the file or the class has
        raise ConfigError(f"synthesizer {name!r}: unknown override(s) {unknown} "
                          f"(accepted: {sorted(k for k in accepted if not k.startswith('_'))})")
    explicit = overridden | set(params)
    if variants is not None:
        if name == stem:
            raise ConfigError(f"synthesizer {name!r} is used through its variants: {', '.join(sorted(variants))}")
        cfg = _apply_variant(name, cfg, variants[name], explicit, accepted)
    if preset is not None:
        if preset not in presets:
            raise ConfigError(
                f"synthesizer {name!r} has no preset {preset!r} (has: {sorted(presets) or 'none'})"
            )
        unknown = set(presets[preset]) - accepted
        if unknown:
            raise ConfigError(f"synthesizer {name!r}, preset {preset!r}: unknown keys {sorted(unknown)}")
        cfg.update({k: v for k, v in presets[preset].items() if k not in explicit})
    unknown = sorted(set(params) - accepted)
    if unknown:
        raise ConfigError(f"synthesizer {name!r}: unknown parameter(s) {unknown} in the study's params "
                          f"(the config has: {sorted(k for k in accepted if not k.startswith('_'))})")
    cfg.update(params)
    check_constructor(name, cfg)
    return cfg


def synthesizer_class(name: str, cfg: dict) -> type:
    """The class a synthesizer config's `_target_` names (imported; a ConfigError naming the config if not)."""
    target = cfg.get("_target_")
    if not target:
        raise ConfigError(f"synthesizer {name!r}: `_target_` is missing")
    try:
        cls = _locate(target)
    except Exception as exc:  # noqa: BLE001 - any import failure of the user's module
        raise ConfigError(f"synthesizer {name!r}: cannot import _target_ {target!r}: {_one_line(exc)}") from None
    if not isinstance(cls, type):
        raise ConfigError(f"synthesizer {name!r}: _target_ {target!r} is not a class")
    return cls


def _argument_names(cls: type) -> set[str]:
    params = inspect.signature(cls.__init__).parameters
    return {k for k, p in params.items() if k != "self" and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)}


_NOT_PLAIN = object()


def _plain_value(value: Any) -> Any:
    """`value` as a config holds it (tuples as lists), or _NOT_PLAIN for anything a YAML cannot say."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (list, tuple)):
        out = [_plain_value(v) for v in value]
        return _NOT_PLAIN if any(v is _NOT_PLAIN for v in out) else out
    if isinstance(value, dict) and all(isinstance(k, str) for k in value):
        out = {k: _plain_value(v) for k, v in value.items()}
        return _NOT_PLAIN if any(v is _NOT_PLAIN for v in out.values()) else out
    return _NOT_PLAIN


def constructor_defaults(cls: type) -> dict[str, Any]:
    """The constructor's keyword arguments whose default is a plain value (None, bool, int, float, str,
    and lists, tuples and mappings of them; tuples as lists, as a YAML gives them). Another default
    (an object) stays the constructor's own and is not recorded."""
    out = {}
    for key, p in inspect.signature(cls.__init__).parameters.items():
        if key == "self" or key.startswith("_") or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) \
                or p.default is p.empty:
            continue
        value = _plain_value(p.default)
        if value is not _NOT_PLAIN:
            out[key] = value
    return out


def _same_value(a: Any, b: Any) -> bool:
    """Equal as config values: 1 and 1.0 alike, True and 1 not, a tuple and a list alike."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same_value(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same_value(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple, dict)) or isinstance(b, (list, tuple, dict)):
        return False
    numbers = isinstance(a, (int, float)) and isinstance(b, (int, float))
    return (type(a) is type(b) or numbers) and a == b


def repeated_defaults(cls: type, written: dict) -> list[str]:
    """The keys of a config that repeat the constructor's default (the same value written twice).
    A default is written once: in the constructor, or in the YAML for an argument without one."""
    params = inspect.signature(cls.__init__).parameters
    return sorted(k for k, v in written.items()
                  if k in params and not k.startswith("_") and params[k].default is not params[k].empty
                  and _same_value(v, params[k].default))


def synthesizer_cost(name: str) -> str:
    """How long a synthesizer's cells take: its YAML's `cost:` (of the file declaring it, for a variant),
    DEFAULT_COST when the file does not say."""
    stem = variant_index("synthesizer").get(name, name)
    return str(group_config("synthesizer", stem).get(COST_KEY, DEFAULT_COST))


def _apply_variant(name: str, cfg: dict, variant: Any, explicit: set[str], accepted: set[str]) -> dict:
    """The variant's settings over the file's; a user's explicit override wins over both."""
    if isinstance(variant, dict):
        unknown = sorted(set(variant) - accepted)
        if unknown:
            raise ConfigError(f"synthesizer variant {name!r}: unknown keys {unknown}")
        return {**cfg, **{k: v for k, v in variant.items() if k not in explicit}}
    if not isinstance(variant, (str, int, float)) or not any(
            isinstance(v, str) and VARIANT_TOKEN in v for v in cfg.values()):
        raise ConfigError(f"synthesizer variant {name!r}: a mapping of arguments, or a value for a "
                          f"{VARIANT_TOKEN} placeholder in the file's string arguments (found none)")
    return {k: v.replace(VARIANT_TOKEN, str(variant)) if isinstance(v, str) else v for k, v in cfg.items()}


def check_constructor(name: str, cfg: dict, group: str = "synthesizer") -> type:
    """Check `_target_` imports a class of the group's base and every key is a constructor
    argument, before any job; returns the class."""
    target = cfg.get("_target_")
    if not target:
        raise ConfigError(f"{group} {name!r}: `_target_` is missing")
    try:
        cls = _locate(target)
        if not isinstance(cls, type):
            raise ValueError(f"Located non-class of type '{type(cls).__name__}' while loading '{target}'")  # noqa: TRY004 - as hydra's get_class words it
    except Exception as exc:  # noqa: BLE001 - hydra wraps ImportError in several ways
        raise ConfigError(f"{group} {name!r}: cannot import _target_ {target!r}: {_one_line(exc)}") from None
    if group == "synthesizer":
        from holdbench.synthesizers.base import Synthesizer
        from holdbench.synthesizers.sequential import SequentialSynthesizer

        bases: tuple[type, ...] = (Synthesizer, SequentialSynthesizer)
    else:
        from holdbench.metrics.registry import MetricFamily

        bases = (MetricFamily,)
    if not (isinstance(cls, type) and issubclass(cls, bases)):
        raise ConfigError(f"{group} {name!r}: {target} is not a "
                          + " or a ".join(f"{b.__module__}.{b.__name__}" for b in bases))
    params = inspect.signature(cls.__init__).parameters
    takes_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
    unknown = sorted(k for k in cfg if not k.startswith("_") and k not in params)
    if unknown and not takes_any:
        raise ConfigError(
            f"{group} {name!r}: unknown parameter(s) {unknown} for {target} "
            f"(accepted: {sorted(k for k in params if k != 'self')})"
        )
    check_argument_types(f"{group} {name!r}", cls, cfg)
    return cls


def is_sequential(cfg: dict) -> bool:
    """True when a resolved synthesizer config (`synthesizer_config`) or a metrics family config builds a
    sequential (subject + event) class: a holdbench.synthesizers.sequential.SequentialSynthesizer or a
    holdbench.metrics.sequential.SequentialFamily. That is how a study tells sequential synthesizers and metric
    families from flat ones: by their class, not by their name or directory."""
    cls = _locate(cfg["_target_"])
    from holdbench.synthesizers.sequential import SequentialSynthesizer

    if issubclass(cls, SequentialSynthesizer):
        return True
    from holdbench.metrics.sequential import SequentialFamily

    return issubclass(cls, SequentialFamily)


def _locate(path: str) -> Any:
    """The object a dotted path names (the longest importable module prefix, then attributes),
    as hydra.utils.get_class finds it, without importing Hydra."""
    import importlib

    parts = path.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError as exc:
            if exc.name is not None and not ".".join(parts[:cut]).startswith(exc.name):
                raise
            continue
        for attr in parts[cut:]:
            obj = getattr(obj, attr)
        return obj
    raise ImportError(f"no module named {parts[0]!r}")


def metric_family_classes(metrics_cfg: dict) -> dict[str, type]:
    """The metric family classes a metrics config names (checked, not instantiated)."""
    families = metrics_cfg.get("families")
    if not isinstance(families, dict) or not families:
        raise ConfigError("metrics: `families` must be a non-empty mapping name -> {_target_: ..., options}")
    if all(cfg is None for cfg in families.values()):
        raise ConfigError("metrics: every family is set to null: nothing to compute")
    out = {}
    for name, cfg in families.items():
        if cfg is None:  # a config that inherits a family leaves it out by setting it to null
            continue
        if not isinstance(cfg, dict):
            raise ConfigError(f"metrics family {name!r}: expected a mapping with `_target_`, got {cfg!r}")
        cls = check_constructor(name, cfg, group="metrics family")
        if cls.name != name:
            raise ConfigError(f"metrics family {name!r}: {cfg['_target_']} is the family {cls.name!r}; "
                              f"list it under that name")
        out[name] = cls
    return out


METRICS_KEYS = {"n_jobs", "seed", "families"}


def check_metrics_config(name: str, cfg: dict, skip: Iterable[str] = ()) -> list:
    """Keys, types and every family's `_target_` and options of a metrics config, before any job.

    Returns the families built (the ones in `skip` are checked against the schema only, not built)."""
    validate_config("metrics", name, cfg)
    where = f"metrics config {config_file('metrics', name)}"
    unknown = sorted(set(cfg) - METRICS_KEYS)
    if unknown:
        raise ConfigError(f"{where}: unknown key(s) {unknown} (known: {sorted(METRICS_KEYS)})")
    n_jobs = cfg.get("n_jobs", 1)
    if not isinstance(n_jobs, int) or isinstance(n_jobs, bool) or n_jobs == 0:
        raise ConfigError(f"{where}: `n_jobs` must be a non-zero integer (-1 = all cores), got {n_jobs!r}")
    seed = cfg.get("seed", 0)
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        raise ConfigError(f"{where}: `seed` must be a non-negative integer, got {seed!r}")
    skip = set(skip)
    kept = {**cfg, "families": {k: v for k, v in (cfg.get("families") or {}).items() if k not in skip}} \
        if skip and isinstance(cfg.get("families"), dict) else cfg
    try:
        return build_metric_families(kept)
    except ConfigError as exc:
        raise ConfigError(f"{where}: {exc}") from None


def build_metric_families(metrics_cfg: dict) -> list:
    """Instantiate every family of a metrics config; a bad option is a ConfigError naming it."""
    classes = metric_family_classes(metrics_cfg)
    out = []
    for name, cfg in metrics_cfg["families"].items():
        if cfg is None:
            continue
        files = cfg.get(PARTIALS_KEY)
        cfg = {k: v for k, v in cfg.items() if k != PARTIALS_KEY}
        options = {k: v for k, v in cfg.items() if k != "_target_"}
        try:
            if any(k.startswith("_") for k in options) or _has_target(options):
                from hydra.utils import instantiate  # Hydra's own keys or nested objects: Hydra builds it

                out.append(instantiate(cfg, _convert_="all"))
            else:
                out.append(classes[name](**options))
        except Exception as exc:  # noqa: BLE001 - hydra wraps the constructor's ValueError
            raise ConfigError(f"metrics family {name!r}: {_one_line(exc.__cause__ or exc)}") from None
        if files:
            out[-1] = _merged_family(out[-1], files)
    return out


#: a family option the harness adds (never a config file): the evaluate_shard jobs' .npz files of a
#: sharded cell, whose partial results the family then merges instead of computing
PARTIALS_KEY = "_partials"


def _merged_family(family: Any, files: list[str]) -> Any:
    """The family computed by merging its partial results from the shard files (in order)."""
    import numpy as np

    from holdbench.metrics.registry import MergedFamily

    prefix = f"{family.name}."
    partials = []
    for path in files:
        with np.load(path, allow_pickle=False) as npz:
            partials.append({k.removeprefix(prefix): npz[k] for k in npz.files if k.startswith(prefix)})
    return MergedFamily(family, partials)


def _has_target(value: Any) -> bool:
    if isinstance(value, dict):
        return "_target_" in value or any(_has_target(v) for v in value.values())
    return isinstance(value, list) and any(_has_target(v) for v in value)


def metric_specs(metrics_cfg: dict) -> list:
    """The registry entries (holdbench.metrics.registry.MetricSpec) of a metrics config's families, in order."""
    from holdbench.metrics.registry import specs_of

    return [spec for cls in metric_family_classes(metrics_cfg).values() for spec in specs_of(cls.result_type)]


def build_synthesizer(cfg: dict):
    """Instantiate a resolved synthesizer config (from synthesizer_config)."""
    from hydra.utils import instantiate

    return instantiate({k: v for k, v in cfg.items() if k != PRESET_KEY}, _convert_="all")

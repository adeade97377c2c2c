"""Hydra compose helpers: the one place configs are read, merged and checked.

Snakemake owns output paths, so Hydra is used through its compose API only. Every
check here runs before a job starts and names the offending key.
"""

from __future__ import annotations

import inspect
import os
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from hydra import compose, initialize_config_dir
from hydra.errors import HydraException
from hydra.utils import get_class
from omegaconf import DictConfig, OmegaConf
from omegaconf.errors import OmegaConfBaseException

REPO_ROOT = Path(__file__).resolve().parents[1]
#: names of datasets, synthesizers and studies become path parts: keep them tame
NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
PRESET_KEY = "presets"


class ConfigError(ValueError):
    """A config is invalid; the message names the file or key."""


def conf_dir() -> Path:
    return Path(os.environ.get("HOLDBENCH_CONF_DIR", REPO_ROOT / "conf")).resolve()


def check_name(kind: str, name: str) -> str:
    """Reject names that could escape results/ or break paths ('../x', 'a/b', '')."""
    if not isinstance(name, str) or not NAME_RE.match(name) or ".." in name:
        raise ConfigError(
            f"{kind} name {name!r} is not allowed: use letters, digits, '_', '-' and '.' "
            "(no path separators, no '..')"
        )
    return name


def available(group: str) -> list[str]:
    """Names of the configs in a group (conf/<group>/*.yaml)."""
    return sorted(p.stem for p in (conf_dir() / group).glob("*.yaml"))


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
    if name not in available(group):
        raise ConfigError(
            f"unknown {group} {name!r}: no {conf_dir() / group / (name + '.yaml')} "
            f"(known: {', '.join(available(group))})"
        )
    prefix = "++" if add_keys else ""
    ovr = [f"+{group}={name}"] + [f"{prefix}{group}.{o}" for o in overrides]
    try:
        with initialize_config_dir(config_dir=str(conf_dir()), version_base="1.3"):
            cfg = compose(config_name="config", overrides=ovr)
    except (HydraException, OmegaConfBaseException) as exc:
        raise ConfigError(f"{group} {name!r}: {_one_line(exc)}") from exc
    return cfg[group]


def _one_line(exc: Exception) -> str:
    return " ".join(str(exc).split())


def to_container(cfg: DictConfig) -> dict[str, Any]:
    return OmegaConf.to_container(cfg, resolve=True)  # type: ignore[return-value]


def synthesizer_config(name: str, preset: str | None = None, overrides: Iterable[str] = ()) -> dict:
    """The resolved constructor config of a synthesizer, preset merged in and checked.

    A synthesizer YAML holds `_target_`, constructor arguments and optional
    `presets: {smoke: {arg: value}}`. Overrides are `arg=value` strings.
    """
    cfg = to_container(load_group("synthesizer", name, overrides))
    presets = cfg.pop(PRESET_KEY, None) or {}
    if preset is not None:
        if preset not in presets:
            raise ConfigError(
                f"synthesizer {name!r} has no preset {preset!r} (has: {sorted(presets) or 'none'})"
            )
        unknown = set(presets[preset]) - set(cfg)
        if unknown:
            raise ConfigError(f"synthesizer {name!r}, preset {preset!r}: unknown keys {sorted(unknown)}")
        explicit = {o.split("=", 1)[0] for o in overrides}
        cfg.update({k: v for k, v in presets[preset].items() if k not in explicit})
    check_constructor(name, cfg)
    return cfg


def check_constructor(name: str, cfg: dict) -> None:
    """Check `_target_` imports and every key is a constructor argument, before any job."""
    target = cfg.get("_target_")
    if not target:
        raise ConfigError(f"synthesizer {name!r}: `_target_` is missing")
    try:
        cls = get_class(target)
    except Exception as exc:  # hydra wraps ImportError in several ways
        raise ConfigError(f"synthesizer {name!r}: cannot import _target_ {target!r}: {_one_line(exc)}")
    from synthesizers.base import Synthesizer

    if not (isinstance(cls, type) and issubclass(cls, Synthesizer)):
        raise ConfigError(f"synthesizer {name!r}: {target} is not a synthesizers.base.Synthesizer")
    params = inspect.signature(cls.__init__).parameters
    takes_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
    unknown = sorted(k for k in cfg if not k.startswith("_") and k not in params)
    if unknown and not takes_any:
        raise ConfigError(
            f"synthesizer {name!r}: unknown parameter(s) {unknown} for {target} "
            f"(accepted: {sorted(k for k in params if k != 'self')})"
        )


def build_synthesizer(cfg: dict):
    """Instantiate a resolved synthesizer config (from synthesizer_config)."""
    from hydra.utils import instantiate

    return instantiate({k: v for k, v in cfg.items() if k != PRESET_KEY}, _convert_="all")

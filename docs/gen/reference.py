"""The reference pages of the docs site, generated at build time (mkdocs-gen-files, mkdocs.yml) from the
code and the shipped configs, so that they cannot drift from them:

- reference/cli.md           the `holdbench` argument parser (holdbench.benchmark.cli.build_parser)
- reference/metrics.md       the metric registry, family by family, of every config in conf/metrics/
- reference/synthesizers.md  every conf/synthesizer/*.yaml (variants included) and its class
- reference/configuration.md every key of every config group, from the JSON schemas

Run by `python -m mkdocs build` / `serve`; `python docs/gen/reference.py OUTDIR` writes the four pages
into OUTDIR instead (to read them without building the site). Everything named here is imported, not
parsed from source, so a reference page shows what the code does.
"""

from __future__ import annotations

import argparse
import dataclasses
import inspect
import os
import re
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[2]
# the reference describes the configs shipped in conf/, not a user's search path or a replaced tree
for _var in ("HOLDBENCH_CONF_DIR", "HOLDBENCH_CONFIG_PATH"):
    os.environ.pop(_var, None)

from holdbench.benchmark import config as hconfig
from holdbench.benchmark.cli import build_parser
from holdbench.metrics.registry import _ARTIFACT, MetricFamily, specs_of

CONF = REPO / "conf"
SCHEMAS = {  # config group -> its schema, in the order the configuration page lists them
    "study": REPO / "benchmark" / "schemas" / "study.schema.yaml",
    "dataset": REPO / "benchmark" / "schemas" / "dataset.schema.yaml",
    "synthesizer": REPO / "benchmark" / "schemas" / "synthesizer.schema.yaml",
    "metrics": REPO / "benchmark" / "schemas" / "metrics.schema.yaml",
    "gates": REPO / "benchmark" / "schemas" / "gates.schema.yaml",
    "workflow": REPO / "benchmark" / "workflow" / "config.schema.yaml",
}
GENERATED = "!!! note \"Generated\"\n    This page is generated from {source} when the site is built (docs/gen/reference.py).\n"


# ---------------------------------------------------------------- Markdown helpers

def text(value: Any) -> str:
    """Prose for a Markdown table cell: one line, HTML and table syntax escaped outside code spans."""
    parts = re.split(r"(`[^`]*`)", " ".join(str(value).split()))
    out = []
    for part in parts:
        if part.startswith("`") and part.endswith("`") and len(part) > 1:
            out.append(part)
        else:
            out.append(part.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
                       .replace("|", "\\|").replace("*", "\\*"))
    return "".join(out)


def code(value: Any) -> str:
    """A value as an inline code span (backticks inside are doubled around)."""
    s = " ".join(str(value).split())  # a pipe inside a code span does not split a table cell
    return f"`` {s} ``" if "`" in s else f"`{s}`"


def yaml_value(value: Any) -> str:
    """A config value as YAML writes it inline (null, true, [1, 2], {a: 1})."""
    return yaml.safe_dump(value, default_flow_style=True, width=10_000, sort_keys=False).strip().removesuffix(
        "\n...").removesuffix("...").strip()


def table(header: Iterable[str], rows: Iterable[Iterable[str]]) -> str:
    header = list(header)
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def first_paragraph(doc: str | None) -> str:
    doc = inspect.cleandoc(doc or "")
    return " ".join(doc.split("\n\n", 1)[0].split())


def slug(title: str) -> str:
    """The anchor mkdocs gives a heading (Python-Markdown's toc slugify)."""
    from markdown.extensions.toc import slugify

    return slugify(title, "-")


# ---------------------------------------------------------------- reference/cli.md

def _subcommands(parser: argparse.ArgumentParser) -> list[tuple[str, str, argparse.ArgumentParser]]:
    out = []
    for action in parser._actions:  # argparse keeps no public list of subcommands
        if isinstance(action, argparse._SubParsersAction):
            helps = {a.dest: a.help for a in action._choices_actions}
            out += [(name, helps.get(name) or "", sub) for name, sub in action.choices.items()]
    return out


def _argument_row(action: argparse.Action) -> list[str]:
    if action.option_strings:
        name = ", ".join(code(o) for o in action.option_strings)
        if action.nargs != 0:
            metavar = action.metavar or action.dest.upper()
            name += " " + code(metavar if action.nargs in (None, 1) else f"{metavar} ...")
    else:
        name = code(action.metavar or action.dest)
        if action.nargs in ("?", "*"):
            name += " (optional)"
    if action.nargs == 0 or action.default in (None, [], argparse.SUPPRESS):
        default = ""
    else:
        default = code(action.default)
    more = []
    if action.choices:
        more.append("one of " + ", ".join(code(c) for c in action.choices))
    if isinstance(action, argparse._AppendAction) and "repeatable" not in (action.help or ""):
        more.append("repeatable")
    elif action.nargs in ("+", "*"):
        more.append("one or more values" if action.nargs == "+" else "any number of values")
    if action.required and action.option_strings:
        more.append("required")
    help_ = text(action.help or "")
    if more:
        help_ = (help_ + " " if help_ else "") + "(" + "; ".join(more) + ")"
    return [name, default, help_]


def _usage(parser: argparse.ArgumentParser) -> str:
    """The usage line at a fixed width (argparse otherwise wraps at the terminal's)."""
    return argparse.HelpFormatter(parser.prog, width=100)._format_usage(
        parser.usage, parser._actions, parser._mutually_exclusive_groups, "usage: ").strip()


def _undocumented(name: str, parser: argparse.ArgumentParser) -> list[str]:
    return [f"holdbench {name}: {'/'.join(a.option_strings) or a.dest}" for a in parser._actions
            if not (a.help or "").strip() and not isinstance(a, argparse._SubParsersAction)]


def cli_page() -> str:
    saved = os.environ.pop("MLFLOW_TRACKING_URI", None)  # a default read from the environment: show the fallback
    try:
        parser = build_parser()
    finally:
        if saved is not None:
            os.environ["MLFLOW_TRACKING_URI"] = saved
    missing = _undocumented("", parser) + [m for name, _, sub in _subcommands(parser) for m in _undocumented(name, sub)]
    if missing:
        raise ValueError("argument(s) without a help text (the CLI reference prints it): " + ", ".join(missing))
    out = ["# Command line\n", GENERATED.format(source="the argument parser, "
           "`holdbench.benchmark.cli.build_parser()`"),
           f"{text(parser.description)}\n",
           "```text\n" + _usage(parser) + "\n```\n"]
    top = [a for a in parser._actions if a.option_strings]
    out.append(table(["option", "default", "meaning"], [_argument_row(a) for a in top]))
    commands = sorted(_subcommands(parser), key=lambda c: c[0])
    out.append("\n" + table(["command", "what it does"],
                            [[f"[{code(name)}](#holdbench-{slug(name)})", text(help_)]
                             for name, help_, _ in commands]))
    for name, help_, sub in commands:
        out.append(f"\n## holdbench {name}\n")
        out.append(f"{text(sub.description or help_)}\n")
        out.append("```text\n" + _usage(sub) + "\n```\n")
        rows = [_argument_row(a) for a in sub._actions if not isinstance(a, argparse._HelpAction)]
        if rows:
            out.append(table(["argument", "default", "meaning"], rows))
        else:
            out.append("No arguments.\n")
        if sub.epilog:
            out.append(f"\n{text(sub.epilog)}\n")
    return "\n".join(out)


# ---------------------------------------------------------------- reference/metrics.md

def metrics_configs() -> dict[str, dict]:
    """Every shipped metrics config, resolved (a config may extend another), default and sequential first."""
    names = sorted(p.stem for p in (CONF / "metrics").glob("*.yaml"))
    names.sort(key=lambda n: (n not in ("default", "sequential"), n != "default", n))
    return {name: hconfig.group_config("metrics", name) for name in names}


def metric_families(configs: dict[str, dict]) -> dict[str, tuple[type, list[str]]]:
    """family name -> (its class, the metrics configs that compute it), in the configs' order."""
    out: dict[str, tuple[type, list[str]]] = {}
    for config_name, cfg in configs.items():
        for name, cls in hconfig.metric_family_classes(cfg).items():
            if name in out and out[name][0] is not cls:
                raise ValueError(f"metrics family {name!r} is {out[name][0].__qualname__} in "
                                 f"{out[name][1][0]}.yaml but {cls.__qualname__} in {config_name}.yaml")
            out.setdefault(name, (cls, []))[1].append(config_name)
    return out


def _section_title(definition: str) -> str:
    """The heading a `page.md#anchor` definition points to, as its page writes it (an error if none)."""
    page, _, anchor = definition.partition("#")
    path = REPO / "docs" / page
    if not path.is_file():
        raise ValueError(f"definition {definition!r}: docs/{page} does not exist")
    body = re.sub(r"^```.*?^```", "", path.read_text(), flags=re.MULTILINE | re.DOTALL)
    headings = [h.strip() for h in re.findall(r"^#{1,6}\s+(.+?)\s*#*\s*$", body, re.MULTILINE)]
    if not anchor:
        return headings[0] if headings else page
    for h in headings:
        if slug(h) == anchor:
            return h
    raise ValueError(f"definition {definition!r}: docs/{page} has no heading with the anchor #{anchor}")


def _code_paths(sentence: str) -> str:
    """The repository paths a sentence names (tests/..., scripts/...) as code spans."""
    return re.sub(r"(?<![`\w])((?:tests|scripts)/[\w/.-]+\.py)", r"`\1`", sentence)


def _family_doc(cls: type) -> tuple[str, str]:
    for attr in ("definition", "reference"):
        value = getattr(cls, attr, None)
        if not isinstance(value, str) or not value.strip():
            raise ValueError(f"{cls.__module__}.{cls.__qualname__} has no `{attr}` (see MetricFamily)")
    return cls.definition, cls.reference


def _param_notes(doc: str, names: list[str]) -> dict[str, str]:
    """What a constructor docstring says about each parameter: the text after `name:` (or `a, b:`, or
    `name (unit):`) up to the next parameter's label; a parameter the docstring does not name gets none."""
    label = re.compile(r"(?<![\w.`])(\w+(?:,\s*\w+)*)\s*(?:\([^)]*\))?:(?=\s)")
    marks = [(m.start(), m.end(), [n.strip() for n in m.group(1).split(",")]) for m in label.finditer(doc)]
    marks = [m for m in marks if all(n in names for n in m[2])]
    notes: dict[str, str] = {}
    for i, (_, end, group) in enumerate(marks):
        stop = marks[i + 1][0] if i + 1 < len(marks) else len(doc)
        note = " ".join(doc[end:stop].split()).rstrip(";, ")
        for n in group:
            notes.setdefault(n, note)
    return notes


def _options(cls: type) -> list[list[str]]:
    """The constructor's parameters: name, default, and what its docstring says about it (if anything)."""
    params = [p for p in list(inspect.signature(cls.__init__).parameters.values())[1:]
              if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    notes = _param_notes(inspect.getdoc(cls.__init__) or "", [p.name for p in params])
    return [[code(p.name), "required" if p.default is p.empty else code(yaml_value(p.default)),
             text(notes.get(p.name, ""))] for p in params]


def metrics_page() -> str:
    configs = metrics_configs()
    families = metric_families(configs)
    out = ["# Metrics\n", GENERATED.format(source="the metric registry (`holdbench.metrics.registry`: every "
           "family's result dataclass and its `metric(...)` fields) and the metrics configs in conf/metrics/"),
           "Every number holdbench reports is a field of a metric family's result, declared once with its "
           "label, group, direction and meaning. The **key** is the name everywhere: in `metrics.json`, as "
           "a leaderboard column, as an MLflow metric and in a gates file. **Better** says which way is good "
           "(an *ideal* value is best when closest). **Interval** names the fields that hold the metric's "
           "95% interval. **Digits** is how many decimals tables show. Each family links to the page that "
           "defines its metrics and names the independent reference its values are checked against.\n",
           table(["family", "metrics", "computed by the configs", "defined in"],
                 [[f"[{code(name)}](#{slug(name)})", str(len(specs_of(cls.result_type))),
                   ", ".join(code(c) for c in used),
                   f"[{text(_section_title(_family_doc(cls)[0]))}](../{_family_doc(cls)[0]})"]
                  for name, (cls, used) in families.items()])]
    for name, (cls, used) in families.items():
        definition, reference = _family_doc(cls)
        specs = specs_of(cls.result_type)
        out.append(f"\n## {name}\n")
        out.append(f"{text(first_paragraph(cls.__doc__))}\n")
        out.append(f"- **Class**: {code(cls.__module__ + '.' + cls.__qualname__)}, listed as {code(name)} "
                   f"under `families:` in " + ", ".join(f"`conf/metrics/{c}.yaml`" for c in used))
        out.append(f"- **Definition**: [{text(_section_title(definition))}](../{definition}) "
                   f"(`docs/{definition.split('#')[0]}`)")
        out.append(f"- **Checked against**: {text(_code_paths(reference))}")
        sequential = hconfig.is_sequential({"_target_": f"{cls.__module__}.{cls.__qualname__}"})
        out.append(f"- **Data**: {'sequential (subject + event) studies only' if sequential else 'flat tables'}"
                   + ("; shardable (`evaluate_shards`)" if getattr(cls, "shardable", False) else ""))
        headline = [s.name for s in specs if s.headline]
        if headline:
            out.append("- **Headline metrics**: " + ", ".join(code(h) for h in headline))
        out.append("")
        number = re.match(r"(\d+)\.", _section_title(definition))
        see = f"([{'§' + number.group(1) if number else 'definition'}](../{definition}))"
        rows = []
        for s in specs:
            reading = f"{s.group}; {text(s.better)}; {s.digits} digits"
            if s.interval:
                reading += "; 95% interval " + " – ".join(code(f) for f in s.interval)
            rows.append([f"{code(s.name)}<br>{text(s.label)}", reading, f"{text(s.meaning)} {see}"])
        out.append(table(["key and label", "group; better; digits; interval", "meaning"], rows))
        artifacts = [f for f in dataclasses.fields(cls.result_type) if _ARTIFACT in f.metadata]
        if artifacts:
            out.append("\nTables written beside `metrics.json` in the cell (`<name>.csv`):\n")
            out.append(table(["table", "what it holds"],
                             [[code(f.name), text(f.metadata[_ARTIFACT])] for f in artifacts]))
        options = _options(cls)
        inner = getattr(cls, "inner", None)  # a family that runs another one (subject_*: on subject vectors)
        if not options and isinstance(inner, type) and issubclass(inner, MetricFamily):
            out.append(f"\nOptions: those of the flat family [{code(inner.name)}](#{slug(inner.name)}), which it runs.\n")
        elif not options:
            out.append("\nNo options.\n")
        if options:
            out.append(f"\nOptions (constructor arguments, set under `families: {{{name}: ...}}` of a metrics "
                       "config; unset ones take these defaults):\n")
            out.append(table(["option", "default", "meaning"], options))
    return "\n".join(out)


# ---------------------------------------------------------------- reference/synthesizers.md

def _plugin_of(cls: type) -> Any | None:
    """The plug-in environment (contracts/plugin_env.py) a synthesizer class runs in, or None."""
    from holdbench.contracts import plugin_env
    from holdbench.synthesizers._isolated import IsolatedSynthesizer

    if not issubclass(cls, IsolatedSynthesizer):
        return None
    # a plug-in is the folder its module lives in (plugin.toml, requirements.txt, worker.py)
    return plugin_env.load_plugin(Path(sys.modules[cls.__module__].__file__).resolve().parent)


def _synth_rows(cls: type, raw: dict) -> list[list[str]]:
    params = [p for p in list(inspect.signature(cls.__init__).parameters.values())[1:]
              if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    names = [p.name for p in params]
    notes = {**_param_notes(inspect.cleandoc(cls.__doc__ or ""), names),
             **_param_notes(inspect.cleandoc(cls.__init__.__doc__ or ""), names)}  # the constructor's own first
    return [[code(p.name), "required" if p.default is p.empty else code(yaml_value(p.default)),
             code(yaml_value(raw[p.name])) if p.name in raw else "", text(notes.get(p.name, ""))] for p in params]


def synthesizers_page() -> str:
    files = sorted((CONF / "synthesizer").glob("*.yaml"))
    entries = []
    for path in files:
        raw = yaml.safe_load(path.read_text()) or {}
        cls = hconfig._locate(raw["_target_"])
        entries.append((path, raw, cls))
    out = ["# Synthesizers\n", GENERATED.format(source="the synthesizer configs, `conf/synthesizer/*.yaml`, "
           "and the classes their `_target_` names"),
           "A study names synthesizers by config name, or by variant name for a config that declares "
           "`variants:` (such a config is used through its variants only). A config's keys other than "
           "`_target_`, `cost`, `presets` and `variants` are the class's constructor arguments; the table of "
           "each synthesizer shows the constructor's default beside the value the config sets. "
           "**Plug-in** synthesizers run in a virtual environment of their own "
           "([DP and plug-in generators](../guides/dp-and-plugin-generators.md)); every synthesizer runs in "
           "its own process with the study's limits ([failure model](failure-model.md)).\n"]
    summary = []
    for path, raw, cls in entries:
        env = _plugin_of(cls)
        seq = hconfig.is_sequential({"_target_": raw["_target_"]})
        params = inspect.signature(cls.__init__).parameters
        variants = list(raw.get("variants") or {})
        summary.append([f"[{code(path.stem)}](#{slug(path.stem)})",
                        ", ".join(code(v) for v in variants) if variants else "",
                        "sequential" if seq else "flat", f"`{env.name}` venv" if env else "main",
                        "yes (`epsilon`)" if "epsilon" in params else "no",
                        raw.get("cost", hconfig.DEFAULT_COST)])
    out.append(table(["config", "variants (the names a study uses)", "data", "runs in", "DP", "cost"], summary))
    for path, raw, cls in entries:
        env = _plugin_of(cls)
        params = inspect.signature(cls.__init__).parameters
        out.append(f"\n## {path.stem}\n")
        out.append(f"{text(first_paragraph(cls.__doc__)) or '(the class has no docstring)'}\n")
        out.append(f"- **Config**: `conf/synthesizer/{path.name}`")
        out.append(f"- **Class**: {code(raw['_target_'])}")
        seq = hconfig.is_sequential({"_target_": raw["_target_"]})
        out.append(f"- **Data**: {'sequential (subject + event tables)' if seq else 'flat tables'}")
        out.append(f"- **Cost**: {raw.get('cost', hconfig.DEFAULT_COST)} (the workflow schedules cheap cells first)")
        if env is not None:
            out.append(f"- **Runs in**: the plug-in venv `{env.venv.name}` (plug-in `{env.name}`, interpreter "
                       f"overridable with `${env.env_var}`; pinned requirements `{env.requirements_path.relative_to(REPO)}`)"
                       "; without it the cell is `skipped` with the install command")
        else:
            out.append("- **Runs in**: the main environment")
        if "epsilon" in params:
            out.append("- **Differential privacy**: yes, at the budget of its `epsilon` argument")
        else:
            out.append("- **Differential privacy**: no formal guarantee")
        out.append("")
        rows = _synth_rows(cls, raw)
        if rows:
            out.append(table(["argument", "constructor default", "this config", "meaning (from the class)"], rows))
        else:
            out.append("No constructor arguments.\n")
        variants = raw.get("variants") or {}
        if variants:
            out.append("\nVariants (each a name a study can use):\n")
            out.append(table(["variant", "settings"], [[code(v), code(yaml_value(s))] for v, s in variants.items()]))
        presets = raw.get("presets") or {}
        if presets:
            out.append("\nPresets (`preset:` of a study; `smoke` is the quick one tests use):\n")
            out.append(table(["preset", "settings"], [[code(p), code(yaml_value(s or {}))] for p, s in presets.items()]))
    return "\n".join(out)


# ---------------------------------------------------------------- reference/configuration.md

def _type_of(node: dict, defs: dict) -> tuple[str, str]:
    """(type, allowed values) of a schema node, in words."""
    if "$ref" in node:
        target = defs[node["$ref"].rsplit("/", 1)[-1]]
        kind, allowed = _type_of({**target, **{k: v for k, v in node.items() if k not in ("$ref", "description")}},
                                 defs)
        return kind, target.get("description", allowed)  # a named definition says it in words
    allowed = []
    if "enum" in node:
        allowed.append("one of " + ", ".join(code(yaml_value(v)) for v in node["enum"]))
    if "const" in node:
        allowed.append("exactly " + code(yaml_value(node["const"])))
    if "not" in node and "const" in node["not"]:
        allowed.append("not " + code(yaml_value(node["not"]["const"])))
    if "not" in node and "pattern" in node["not"]:
        allowed.append("not matching " + code(node["not"]["pattern"]))
    for key, word in (("minimum", "≥"), ("exclusiveMinimum", ">"), ("maximum", "≤"), ("exclusiveMaximum", "<")):
        if key in node:
            allowed.append(f"{word} {node[key]:g}" if isinstance(node[key], float) else f"{word} {node[key]}")
    if "pattern" in node:
        allowed.append("matching " + code(node["pattern"]))
    if "minLength" in node:
        allowed.append(f"at least {node['minLength']} character(s)")
    if "minItems" in node:
        allowed.append(f"at least {node['minItems']} item(s)")
    if node.get("uniqueItems"):
        allowed.append("no duplicates")
    if "minProperties" in node:
        allowed.append(f"at least {node['minProperties']} entry(ies)")
    kind = node.get("type")
    if isinstance(kind, list):
        kind = " or ".join(kind)
    if kind == "array" and isinstance(node.get("items"), dict):
        item_kind, item_allowed = _type_of(node["items"], defs)
        kind = f"list of {item_kind}" if item_kind else "list"
        if item_allowed:
            allowed.append("items " + item_allowed)
    if not kind and "enum" in node:
        kind = "string" if all(isinstance(v, str) for v in node["enum"]) else "value"
    return kind or "", "; ".join(allowed)


def _schema_rows(node: dict, defs: dict, prefix: str, required: Iterable[str] = ()) -> list[list[str]]:
    """One row per key of an object schema (nested objects and maps flattened with dotted paths)."""
    rows = []
    required = set(required)
    for key, sub in (node.get("properties") or {}).items():
        path = f"{prefix}{key}"
        rows.append(_row(path, sub, defs, key in required))
        resolved = defs[sub["$ref"].rsplit("/", 1)[-1]] if "$ref" in sub else sub
        if resolved.get("properties"):
            rows += _schema_rows(resolved, defs, path + ".", resolved.get("required", ()))
        extra = resolved.get("additionalProperties")
        if isinstance(extra, dict) and extra.get("properties"):
            rows += _schema_rows(extra, defs, f"{path}.<name>.", extra.get("required", ()))
    return rows


def _row(path: str, node: dict, defs: dict, required: bool) -> list[str]:
    kind, allowed = _type_of(node, defs)
    description = node.get("description") or ("" if "$ref" not in node else
                                               defs[node["$ref"].rsplit("/", 1)[-1]].get("description", ""))
    if not description:
        raise ValueError(f"schema key {path!r} has no description (add one to its schema file)")
    default = code(yaml_value(node["default"])) if "default" in node else ("required" if required else "")
    kind = text(kind) + (f"; {text(allowed)}" if allowed else "")
    return [code(path), kind, default, text(description)]


def _schema_section(group: str, path: Path) -> list[str]:
    schema = yaml.safe_load(path.read_text())
    defs = schema.get("$defs", {})
    out = [f"\n## {group}\n", f"{text(schema.get('description', ''))} (schema: `{path.relative_to(REPO)}`)\n"]
    header = ["key", "type and allowed values", "default", "meaning"]
    out.append(table(header, _schema_rows(schema, defs, "", schema.get("required", ()))))
    extra = schema.get("properties", {})
    for key, sub in extra.items():  # maps whose values take one of several shapes (gates' targets)
        values = sub.get("additionalProperties")
        if isinstance(values, dict) and "oneOf" in values:
            for shape in values["oneOf"]:
                out.append(f"\nA `{key}` entry that is {text(shape.get('description', 'one shape'))} "
                           f"(required: {', '.join(code(r) for r in shape.get('required', []))}):\n")
                out.append(table(header, _schema_rows(shape, defs, f"{key}.<name>.", shape.get("required", ()))))
    return out


def configuration_page() -> str:
    root = yaml.safe_load((CONF / "config.yaml").read_text())
    out = ["# Configuration\n", GENERATED.format(source="the JSON schemas every config is validated against "
           "(`benchmark/schemas/*.schema.yaml`, `benchmark/workflow/config.schema.yaml`)"),
           "holdbench's configs are YAML files in the groups of `conf/` (`conf/<group>/<name>.yaml`), "
           "composed with Hydra; a key outside its group's schema is an error naming the file and the key. "
           "Keys are written below as dotted paths; `<name>` stands for a name you choose (a column, a "
           "gate, a synthesizer). Synthesizer constructor arguments are listed per synthesizer in "
           "[Synthesizers](synthesizers.md), metric family options per family in [Metrics](metrics.md). "
           "How the groups fit together: [Studies and configuration](../guides/studies-and-configuration.md).\n",
           "\n## The root config\n",
           "`conf/config.yaml`: where data, results and the MLflow store are (each from an environment "
           "variable when it is set).\n",
           table(["key", "value"], [[code(k), code(yaml_value(v))] for k, v in root.items() if k != "defaults"])]
    for group, path in SCHEMAS.items():
        section = _schema_section(group, path)
        if group == "workflow":
            section[0] = "\n## workflow\n"
            section.insert(1, "The keys Snakemake's `--config` takes (`holdbench run` sets them; "
                              "`holdbench run STUDY -- --config key=value` adds to them).\n")
        out += section
    return "\n".join(out)


# ---------------------------------------------------------------- the pages

PAGES: dict[str, Callable[[], str]] = {
    "reference/cli.md": cli_page,
    "reference/metrics.md": metrics_page,
    "reference/synthesizers.md": synthesizers_page,
    "reference/configuration.md": configuration_page,
}


def write_pages(write: Callable[[str, str], None]) -> None:
    for page, make in PAGES.items():
        write(page, make())


if __name__ == "__main__":  # python docs/gen/reference.py OUTDIR
    if len(sys.argv) != 2:
        sys.exit("usage: python docs/gen/reference.py OUTDIR")

    def _to_dir(page: str, content: str) -> None:
        path = Path(sys.argv[1]) / page
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content)

    write_pages(_to_dir)
elif __name__ == "<run_path>":  # run by mkdocs-gen-files during a build (runpy.run_path); importing it writes nothing
    import mkdocs_gen_files

    def _to_site(page: str, content: str) -> None:
        with mkdocs_gen_files.open(page, "w") as f:
            f.write(content)
        mkdocs_gen_files.set_edit_path(page, Path(__file__).relative_to(REPO / "docs").as_posix())

    write_pages(_to_site)

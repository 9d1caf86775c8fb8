"""The functions of both kernel APIs, listed for the parity test.

C++: the headers under ``tilewright/native/include`` (and the ones generated for the
runtime) are preprocessed by the host compiler as a compute and as a data-movement kernel
would include them, and every free function declared at namespace scope (global,
``ckernel``, ``tt``) is listed with its overloads: the number of runtime parameters
(without the caller-location parameter every API function takes), how many have
defaults, and the template parameters that are values (``pack_tile<out_of_order>``),
which a Python kernel passes as trailing arguments.  Python: the public functions of
``tilewright.device.kernel_api``.
"""

from __future__ import annotations

import inspect
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

from tilewright.device import kernel_api
from tilewright.native import include_dir
from tilewright.native.runtime import library
from tilewright.native.toolchain import OPTIONS

INCLUDE = Path(include_dir())
SCOPES = ("", "ckernel", "tt")  # namespaces kernels see the API in (ckernel is used)


@dataclass(frozen=True)
class Overload:
    params: tuple[str, ...]  # runtime parameters (declarations), without tw::Loc
    required: int  # without a default
    template_values: tuple[str, ...]  # value template parameters (name or type)
    template_required: int

    @property
    def min_args(self) -> int:
        return self.required + self.template_required

    @property
    def max_args(self) -> int:
        return len(self.params) + len(self.template_values)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(_param_name(p) for p in self.params)


def _headers(kind: str) -> list[str]:
    """The headers a kernel of ``kind`` may include (Tilewright's own tilewright/*.h come with
    them)."""
    out = []
    for path in sorted(INCLUDE.rglob("*.h")):
        rel = path.relative_to(INCLUDE).as_posix()
        if rel.startswith("tilewright/"):
            continue
        compute = rel.startswith(("api/compute/", "compute_kernel_api"))
        common = rel.startswith(("debug/", "api/debug/", "hostdevcommon/", "api/compile_time_args"))
        if kind == "compute" and not (compute or common):
            continue
        if kind == "data_movement" and compute:
            continue
        out.append(rel)
    return out


def _preprocess(kind: str) -> str:
    define = "TW_KERNEL_KIND_COMPUTE" if kind == "compute" else "TW_KERNEL_KIND_DATA_MOVEMENT"
    source = f"#define {define} 1\n" + "".join(f'#include "{h}"\n' for h in _headers(kind))
    gen = library().directory
    cmd = [
        OPTIONS.resolved_compiler(),
        "-std=c++20",
        "-E",
        f"-I{INCLUDE}",
        f"-I{gen}",
        "-x",
        "c++",
        "-",
    ]
    proc = subprocess.run(cmd, input=source, capture_output=True, text=True, check=True)
    keep, lines = False, []
    roots = (str(INCLUDE), str(gen))
    for line in proc.stdout.splitlines():
        if line.startswith("# "):
            m = re.match(r'# \d+ "([^"]+)"', line)
            if m:
                keep = m.group(1).startswith(roots)
            continue
        if keep:
            lines.append(line)
    return "\n".join(lines)


def _split(text: str) -> list[str]:
    depth, cur, parts = 0, "", []
    for ch in text:
        if ch in "(<[{":
            depth += 1
        elif ch in ")>]}":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        parts.append(cur.strip())
    return parts


def _declarations(text: str) -> list[tuple[str, str]]:
    """(namespace, declaration head) of every function at namespace scope."""
    out: list[tuple[str, str]] = []
    stack: list[str] = []
    start = i = 0
    while i < len(text):
        c = text[i]
        if c in "\"'":  # a string or character literal ('{' is no block)
            j = i + 1
            while text[j] != c:
                j += 2 if text[j] == "\\" else 1
            i = j + 1
            continue
        if c in "{;":
            head = text[start:i].strip()
            at_namespace = all(s.startswith("ns:") for s in stack)
            if c == "{":
                ns = re.search(r"\bnamespace\s*(\w*)\s*$", head)
                if ns:
                    stack.append("ns:" + ns.group(1))
                else:
                    if (
                        at_namespace
                        and "(" in head
                        and not re.search(r"\b(struct|class|union|enum)\b", head.split("(")[0])
                    ):
                        out.append(("::".join(s[3:] for s in stack), head))
                    stack.append("body")
            elif (
                at_namespace
                and "(" in head
                and not head.startswith(("using", "typedef", "static_assert"))
            ):
                out.append(("::".join(s[3:] for s in stack), head))
            start = i + 1
        elif c == "}":
            stack.pop()
            start = i + 1
        i += 1
    return out


def _param_name(decl: str) -> str:
    decl = decl.split("=", 1)[0].strip()
    m = re.search(r"(\w+)\s*(\[[^\]]*\])?$", decl)
    return m.group(1) if m else ""


def _parse(head: str) -> tuple[str, Overload] | None:
    head = re.sub(r"\s+", " ", head)
    head = re.sub(r'__attribute__\s*\(\(.*?\)\)|extern "C"', "", head).strip()
    template: list[str] = []
    if head.startswith("template"):
        j, depth = head.index("<"), 0
        for k in range(j, len(head)):
            depth += {"<": 1, ">": -1}.get(head[k], 0)
            if depth == 0:
                break
        template = _split(head[j + 1 : k])
        head = head[k + 1 :].strip()
    m = re.search(r"(\w+)\s*\(", head)
    if m is None or "operator" in head[: m.start()]:
        return None
    name = m.group(1)
    j, depth = m.end() - 1, 0
    for k in range(j, len(head)):
        depth += {"(": 1, ")": -1}.get(head[k], 0)
        if depth == 0:
            break
    params = [p for p in _split(head[j + 1 : k]) if p and p != "void"]
    params = [p for p in params if not p.startswith("::tw::Loc loc")]
    values = [
        t for t in template
        if not re.match(r"(typename|class|auto\s*\.\.\.|typename\s*\.\.\.)", t) and "enable_if" not in t
        and not t.startswith("std::enable_if")
    ]  # fmt: skip
    values = [t for t in values if not t.startswith(("std::", "typename"))]
    return name, Overload(
        params=tuple(params),
        required=sum(1 for p in params if "=" not in p and not p.endswith("...")),
        template_values=tuple(values),
        template_required=sum(1 for t in values if "=" not in t),
    )


def cpp_api() -> dict[str, list[Overload]]:
    """Function name -> its overloads, in both kinds of kernels."""
    api: dict[str, list[Overload]] = {}
    for kind in ("compute", "data_movement"):
        for scope, head in _declarations(_preprocess(kind)):
            if scope not in SCOPES:
                continue
            parsed = _parse(head)
            if parsed is None:
                continue
            name, overload = parsed
            if name.startswith(("twrt_", "tw_")):
                continue
            overloads = api.setdefault(name, [])
            if overload not in overloads:
                overloads.append(overload)
    return api


def compute_names() -> set[str]:
    """Names declared by the compute headers (not by the data-movement ones)."""
    compute = {
        n
        for s, h in _declarations(_preprocess("compute"))
        if s in SCOPES and (p := _parse(h))
        for n in [p[0]]
    }
    dm = {
        n
        for s, h in _declarations(_preprocess("data_movement"))
        if s in SCOPES and (p := _parse(h))
        for n in [p[0]]
    }
    return compute - dm


def python_api() -> dict[str, inspect.Signature]:
    """Public function name of the Python kernel API -> its signature."""
    out: dict[str, inspect.Signature] = {}
    for name in kernel_api.__all__:
        obj = getattr(kernel_api, name)
        if inspect.isclass(obj) or not callable(obj):
            continue
        out[name] = inspect.signature(obj)
    return out


def python_arity(sig: inspect.Signature) -> tuple[int, float]:
    """(required positional arguments, most positional arguments) of a Python function."""
    low, high = 0, 0.0
    for p in sig.parameters.values():
        if p.kind is p.VAR_POSITIONAL:
            high = float("inf")
        elif p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            high += 1
            if p.default is p.empty:
                low += 1
    return low, high

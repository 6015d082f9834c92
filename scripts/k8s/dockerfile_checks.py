"""Policy checks on the Dockerfile that hadolint does not enforce by default.

The final stage must run as a non-root numeric USER; every base image is pinned to a full
version tag (never ``latest`` or a bare major; a base given as a build argument by its
default); no ``ADD`` of URLs; the entrypoint is
``groundguard run``; dependencies are installed against ``constraints.txt``, which pins every
runtime dependency of ``pyproject.toml`` (regenerate it with ``scripts/lock``). Exit 1 on failure.
"""

from __future__ import annotations

import re
import sys
import tomllib
from pathlib import Path

PINNED = re.compile(r"^[\w./-]+:\d+\.\d+\.\d+[\w.-]*(@sha256:[0-9a-f]{64})?$|@sha256:[0-9a-f]{64}$")


def instructions(text: str) -> list[tuple[str, str]]:
    joined = re.sub(r"\\\n", " ", text)
    out = []
    for line in joined.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            word, _, rest = line.partition(" ")
            out.append((word.upper(), rest.strip()))
    return out


def problems(text: str) -> list[str]:
    found: list[str] = []
    steps = instructions(text)
    first = next((i for i, (w, _) in enumerate(steps) if w == "FROM"), len(steps))
    defaults = dict(  # ARG NAME=default before the first FROM: the base images' defaults
        rest.split("=", 1) for word, rest in steps[:first] if word == "ARG" and "=" in rest
    )
    stages = [
        re.sub(r"\$\{(\w+)\}|\$(\w+)", lambda m: defaults.get(m[1] or m[2], m[0]), image)
        for image in (rest.split()[0] for word, rest in steps if word == "FROM")
    ]
    aliases = {rest.split()[-1] for word, rest in steps if word == "FROM" and " AS " in
               rest.upper()}
    for image in stages:
        if image not in aliases and not PINNED.search(image):
            found.append(f"FROM {image}: pin a full version tag (x.y.z) or digest, never latest")
    final = steps[max(i for i, (w, _) in enumerate(steps) if w == "FROM"):]
    users = [rest for word, rest in final if word == "USER"]
    uid = users[-1].split(":")[0] if users else ""
    if not uid.isdigit() or uid == "0":
        found.append("final stage: needs USER <numeric uid> (non-root; runAsNonRoot checks uids)")
    found += [f"ADD {rest}: use COPY; never ADD a URL" for word, rest in steps if word == "ADD"]
    if not any(w == "RUN" and "constraints.txt" in r for w, r in steps):
        found.append("no RUN installs against constraints.txt: dependencies are not pinned")
    if ("ENTRYPOINT", '["groundguard", "run"]') not in final:
        found.append('final stage: ENTRYPOINT ["groundguard", "run"] expected')
    return found


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def unpinned(pyproject: Path, constraints: Path) -> list[str]:
    """Runtime dependencies of ``pyproject`` without an ``==`` pin in ``constraints``."""
    deps = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]["dependencies"]
    names = {_norm(re.split(r"[\s\[<>=!~;]", dep, maxsplit=1)[0]) for dep in deps}
    pinned = {_norm(line.split("==")[0]) for line in
              constraints.read_text(encoding="utf-8").splitlines() if "==" in line}
    return [f"{constraints}: {name} is a dependency without a pin; run scripts/lock"
            for name in sorted(names - pinned)]


def main() -> int:
    path = Path(sys.argv[1] if len(sys.argv) > 1 else "Dockerfile")
    found = problems(path.read_text(encoding="utf-8"))
    found += unpinned(path.parent / "pyproject.toml", path.parent / "constraints.txt")
    for problem in found:
        print(f"  {path}: {problem}", file=sys.stderr)
    print(f"  {path}: policy checks {'failed' if found else 'passed'}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())

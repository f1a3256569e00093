# SPDX-License-Identifier: Apache-2.0
"""``areal-lint PATH...``: the standalone linter, with autofix, diff and several output formats.

Exit status: 0 clean, 1 findings remain, 2 usage or configuration error. Options come from the
command line, then ``[tool.areal-lint]`` in the nearest ``pyproject.toml`` (``config.py``). Runs
files in parallel processes when there are many; output order is always the sorted file order.
"""

from __future__ import annotations

import argparse
import fnmatch
import os
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from areal_lint import __version__, report
from areal_lint.aliases import is_foreign, translate
from areal_lint.config import ConfigError, find_pyproject, load_config, parse_per_file_ignores
from areal_lint.finding import NOT_LINTED, Finding
from areal_lint.libcst_import import import_libcst
from areal_lint.noqa import noqa_lines, silenced
from areal_lint.options import FLAGS, LintOptions, options_from_flags, split_list
from areal_lint.runner import lint_source
from areal_runtime.utils.files import atomic_write_text

if TYPE_CHECKING:
    from areal_lint.cache import Cache

SKIP_DIRS = {
    ".git",
    ".venv",
    "venv",
    "__pycache__",
    "build",
    "dist",
    ".tox",
    ".mypy_cache",
    ".ruff_cache",
    "node_modules",
}
# Files worth parsing (``might_have_findings``) from which a second process pays for itself:
# each costs ~40 ms of parse and walk, a forked worker ~10 ms to start.
PARALLEL_MIN_PARSED = 4


def iter_python_files(paths: Sequence[str], exclude: set[str]) -> Iterator[Path]:
    """Files named on the command line, and ``.py`` files under named directories.

    ``exclude`` holds names or glob patterns, matched against a file's or folder's name and
    its path. Hidden folders, virtualenvs (any folder with ``pyvenv.cfg``) and unrendered
    cookiecutter folders (``{{...}}``, not Python) are never walked into.
    """
    for raw in paths:
        path = Path(raw)
        if not path.exists():
            raise FileNotFoundError(f"{raw}: no such file or directory")
        if path.is_file():
            yield path
            continue
        for root, dirs, files in os.walk(path):  # strings, not Paths: a warm run is mostly this
            dirs[:] = sorted(
                d
                for d in dirs
                if d not in SKIP_DIRS
                and not d.startswith(".")
                and "{{" not in d
                and not (exclude and _excluded(Path(root) / d, exclude))
                and not os.path.exists(os.path.join(root, d, "pyvenv.cfg"))
            )
            for name in sorted(files):
                if name.endswith(".py") and not (exclude and _excluded(Path(root) / name, exclude)):
                    yield Path(os.path.join(root, name))


def _excluded(path: Path, patterns: set[str]) -> bool:
    return any(
        fnmatch.fnmatch(path.name, p) or fnmatch.fnmatch(path.as_posix(), p) for p in patterns
    )


def _ignored_here(path: Path, per_file: dict[str, set[str]], root: Path) -> set[str]:
    """Codes ``per-file-ignores`` silences for ``path`` (globs on the path as given, the path
    relative to the configuration's folder, or the file name)."""
    if not per_file:
        return set()
    given = path.as_posix()
    try:
        relative = path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        relative = given
    out: set[str] = set()
    for glob, codes in per_file.items():
        if any(fnmatch.fnmatch(p, glob) for p in (given, relative, path.name)):
            out |= codes
    return out


def _select(finding: Finding, select: set[str], ignore: set[str]) -> bool:
    if select and not any(finding.code.startswith(s) for s in select):
        return False
    return not any(finding.code.startswith(i) for i in ignore)


def process_file(
    path: Path,
    options: LintOptions,
    mode: str,
    unsafe: bool,
    select: set[str],
    ignore: set[str],
    source: str | None = None,
) -> tuple[str, list[dict], str | None]:
    """Lint (and maybe fix) one file: ``(path, findings as dicts, diff or None)``.

    ``source`` is the text already read (the cache keys on it); None reads the file here.
    """
    try:
        if source is None:
            source = path.read_text(encoding="utf-8")
    except (UnicodeDecodeError, OSError) as exc:
        return (
            str(path),
            [Finding(NOT_LINTED, f"could not read the file: {exc}", 1, 0).as_dict(str(path))],
            None,
        )
    try:
        return _lint_and_fix(path, source, options, mode, unsafe, select, ignore)
    except Exception as exc:  # a linter bug must not stop the run or touch the file
        message = (
            f"areal-lint failed on this file ({type(exc).__name__}: {exc}); it was left "
            "unchanged; please report this with the file"
        )
        return str(path), [Finding(NOT_LINTED, message, 1, 0).as_dict(str(path))], None


def _lint_and_fix(
    path: Path,
    source: str,
    options: LintOptions,
    mode: str,
    unsafe: bool,
    select: set[str],
    ignore: set[str],
) -> tuple[str, list[dict], str | None]:
    fixed = source
    if mode in ("fix", "diff"):
        from areal_lint.autofix import fix_source  # libcst's transformer: only when fixing

        fixed = fix_source(source, options, unsafe=unsafe)[0]
    diff = None
    if fixed != source:
        import difflib

        name = path.as_posix().lstrip("/")
        diff = "".join(
            difflib.unified_diff(
                source.splitlines(True), fixed.splitlines(True), f"a/{name}", f"b/{name}"
            )
        )
    result = fixed if mode == "fix" else source
    findings = [f for f in lint_source(result, str(path), options) if _select(f, select, ignore)]
    if findings:  # tokenizing for comments costs as much as linting: only when needed
        noqa = noqa_lines(result)
        findings = [f for f in findings if not silenced(noqa, f.line, f.code)]
    if result != source:  # last, so a failure above leaves the file untouched
        atomic_write_text(path, result)
    return str(path), [f.as_dict(str(path)) for f in findings], diff


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="areal-lint",
        description="Lint async AReaL rollout workflows. Options may also be set in "
        "[tool.areal-lint] of the nearest pyproject.toml; command-line flags take precedence.",
        epilog="Exit status: 0 no findings, 1 findings, 2 usage or configuration error.",
    )
    p.add_argument("paths", nargs="+", help="files or directories to lint (.py files under them)")
    p.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    p.add_argument("--fix", action="store_true", help="apply safe autofixes in place")
    p.add_argument(
        "--unsafe-fixes", action="store_true", help="also apply fixes that change behaviour"
    )
    p.add_argument(
        "--diff",
        action="store_true",
        help="print the fixes as a diff (on stderr with a machine --format); write nothing",
    )
    p.add_argument(
        "--format",
        choices=["text", "json", "github", "sarif"],
        default="text",
        help="text (path:line:col: CODE message), json, github (GitHub Actions annotations) or "
        "sarif (SARIF 2.1.0, for code scanning); default text",
    )
    p.add_argument(
        "--statistics",
        action="store_true",
        help="after the findings, count them per code (on stderr with a machine --format)",
    )
    p.add_argument(
        "--select",
        default=None,
        help="only these code prefixes (comma-separated); flake8-async's and ruff's ASYNC codes "
        "are read as the ARL codes for the same checks",
    )
    p.add_argument(
        "--ignore",
        default=None,
        help="skip these code prefixes (comma-separated); ASYNC codes as for --select",
    )
    p.add_argument(
        "--exclude", default=None, help="names or glob patterns of files and folders to skip"
    )
    p.add_argument(
        "--per-file-ignores",
        default=None,
        help="codes to skip in some files, flake8-style: 'glob:CODE,CODE glob2:CODE'",
    )
    p.add_argument(
        "--config",
        default=None,
        help="the pyproject.toml to read [tool.areal-lint] from (default: the nearest one "
        "above the first path); 'none' reads no configuration",
    )
    p.add_argument(
        "--no-cache",
        action="store_const",
        const=True,
        default=None,
        help="lint every file, without reading or writing the cache (.areal_lint_cache/ next to "
        "the pyproject.toml, or in the current folder); 'cache = false' in [tool.areal-lint] too",
    )
    p.add_argument(
        "--cache-dir",
        default=None,
        help="where the cache lives (default .areal_lint_cache/ next to the pyproject.toml; "
        "the AREAL_LINT_CACHE_DIR environment variable sets it too)",
    )
    p.add_argument(
        "--jobs",
        type=int,
        default=os.cpu_count() or 1,
        help="processes to lint with when there are many files (default: the CPU count)",
    )
    for flag, help_text in FLAGS.items():
        p.add_argument(f"--arl-{flag}", help=help_text)
    return p


def _apply_config(args: argparse.Namespace) -> dict[str, set[str]]:
    """Fill the options the command line left unset from ``[tool.areal-lint]``; return the
    per-file ignores (the command line's replace the configuration's)."""
    if args.config == "none":
        config = load_config(None)
    elif args.config is not None:
        if not Path(args.config).is_file():
            raise ConfigError(f"--config {args.config}: no such file")
        config = load_config(Path(args.config))
    else:
        config = load_config(find_pyproject(args.paths))
    for dest, value in config.values.items():
        if getattr(args, dest, None) is None:
            setattr(args, dest, value)
    for dest in ("select", "ignore", "exclude"):
        if getattr(args, dest) is None:
            setattr(args, dest, "")
    args.no_cache = bool(args.no_cache)
    args.config_root = config.root
    if args.per_file_ignores is not None:
        return parse_per_file_ignores(args.per_file_ignores)
    return config.per_file_ignores


def _run(
    files: list[Path], settings: tuple, cache: Cache | None, jobs: int
) -> list[tuple[str, list[dict], str | None]]:
    """Every file's result, in order: none for a file the text check clears (most files: it
    costs less than the cache's hash and look-up), else from the cache where its content was
    linted before with these settings, else linted (in ``jobs`` processes when there are many)
    and stored."""
    from areal_lint.runner import might_have_findings

    mode = settings[1]  # settings: options, mode, unsafe, select, ignore (process_file's)
    results: list[tuple[str, list[dict], str | None] | None] = [None] * len(files)
    todo: list[tuple[int, str | None, str | None]] = []  # index, cache key, text
    for i, path in enumerate(files):
        try:
            content = path.read_bytes()
            text = content.decode("utf-8")
        except (OSError, UnicodeDecodeError):
            todo.append((i, None, None))  # process_file reports why it cannot be read
            continue
        if mode == "lint" and not might_have_findings(text):
            results[i] = (str(path), [], None)  # what process_file would return, cheaply
            continue
        if cache is None:
            todo.append((i, None, text))
            continue
        key = cache.key(content)
        hit = cache.get(key, str(path))
        if hit is not None:
            results[i] = (str(path), hit, None)
        else:
            todo.append((i, key, text))
    work = [(files[i], *settings, text) for i, _, text in todo]
    for j, result in _linted(work, jobs):
        i, key, _ = todo[j]
        results[i] = result
        if (
            cache is not None
            and key is not None
            and not any(f["code"] == NOT_LINTED for f in result[1])
        ):  # a linter failure is not a result to keep
            cache.put(key, result[1])
    return results  # type: ignore[return-value]


def _linted(
    work: list[tuple], jobs: int
) -> Iterator[tuple[int, tuple[str, list[dict], str | None]]]:
    """``(index in work, result)`` for every item of ``work``, each as soon as it is linted,
    so the caller stores it in the cache while the workers go on.

    With ``jobs`` > 1 and ``PARALLEL_MIN_PARSED`` files or more (``_run`` has cleared those with
    nothing to parse), the files go to forked workers largest first and one at a time, so two
    big files do not end up in one worker's share at the end. libcst and the rules are imported
    here first: the workers inherit them instead of each importing them again (0.3-0.5 s of CPU
    each).
    """
    order = sorted(range(len(work)), key=lambda i: -len(work[i][-1] or ""))
    if jobs < 2 or len(order) < PARALLEL_MIN_PARSED:
        for i in order:
            yield i, process_file(*work[i])
        return
    from concurrent.futures import ProcessPoolExecutor  # not for the pre-commit case

    import_libcst()
    import areal_lint.rules  # noqa: F401  (inherited by forked workers)

    with ProcessPoolExecutor(min(jobs, len(order))) as pool:
        yield from zip(order, pool.map(process_file, *zip(*(work[i] for i in order))))


# A --select whose every entry names a check no ARL rule makes selects nothing.
_NOTHING = "\0"


def _read_foreign_codes(
    select: set[str], ignore: set[str], per_file: dict[str, set[str]]
) -> tuple[set[str], set[str], dict[str, set[str]], list[str]]:
    """flake8-async's and ruff's codes read as the ARL codes for the same checks, and one note
    per code saying how it was read (``aliases.py``; the table is in lint_rules.md)."""
    if not any(
        is_foreign(c) for c in (*select, *ignore, *(c for v in per_file.values() for c in v))
    ):
        return select, ignore, per_file, []
    notes: dict[str, set[str]] = {}
    new_select, read = translate(select)
    notes.update(read)
    if select and not new_select:
        new_select = {_NOTHING}
    new_ignore, read = translate(ignore)
    notes.update(read)
    new_per_file = {}
    for glob, codes in per_file.items():
        new_per_file[glob], read = translate(codes)
        notes.update(read)
    lines = []
    for code, arl in sorted(notes.items()):
        how = (
            f"is read as {', '.join(sorted(arl))}" if arl else "has no ARL rule: it matches nothing"
        )
        lines.append(
            f"areal-lint: note: {code} (flake8-async/ruff) {how}; the table is in "
            "docs/lint_rules.md"
        )
    return new_select, new_ignore, new_per_file, lines


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.fix and args.diff:
        parser.error("--fix and --diff are exclusive: --diff shows what --fix would write")
    try:
        per_file = _apply_config(args)
        options = options_from_flags(args)
        files = list(iter_python_files(args.paths, split_list(args.exclude)))
    except (ValueError, FileNotFoundError) as exc:  # ConfigError is a ValueError
        print(f"areal-lint: error: {exc}", file=sys.stderr)
        return 2
    mode = "fix" if args.fix else "diff" if args.diff else "lint"
    unsafe = args.unsafe_fixes
    select, ignore, per_file, notes = _read_foreign_codes(
        split_list(args.select), split_list(args.ignore), per_file
    )
    cache = None
    if mode == "lint" and not args.no_cache:
        from areal_lint.cache import Cache, default_dir, settings_key

        root = Path(args.cache_dir) if args.cache_dir else default_dir(args.config_root)
        cache = Cache(root, settings_key(options, select, ignore))
    for note in notes:  # once per project: the cache remembers it was shown
        if cache is None or cache.first_time(note):
            print(note, file=sys.stderr)
    results = _run(files, (options, mode, unsafe, select, ignore), cache, args.jobs)
    all_findings = [finding for _, findings, _ in results for finding in findings]
    if per_file:
        root = args.config_root
        all_findings = [
            f
            for f in all_findings
            if not any(
                f["code"].startswith(c) for c in _ignored_here(Path(f["path"]), per_file, root)
            )
        ]
    _write_report(args.format, all_findings, args.statistics, [d for _, _, d in results if d])
    return 1 if all_findings else 0


def _write_report(fmt: str, findings: list[dict], statistics: bool, diffs: Sequence[str]) -> None:
    """The findings on stdout; what is not part of a machine format goes to stderr.

    ``json``, ``sarif`` and ``github`` are read by programs, so stdout holds that format alone,
    whatever other flag is given: ``--statistics`` and ``--diff`` go to stderr there.
    """
    machine = fmt in report.MACHINE_FORMATS
    sys.stdout.write(report.render(fmt, findings))
    extra = sys.stderr if machine else sys.stdout
    if statistics:
        extra.write(report.statistics(findings))
    for diff in diffs:
        extra.write(diff)


if __name__ == "__main__":
    sys.exit(main())

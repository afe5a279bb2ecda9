"""Smoke-test a built evalkit image the way users and GitHub's runner run it.

    uv run python scripts/image_smoke.py --image evalkit:ci [--platform linux/arm64]

Run by CI (`.github/workflows/ci.yml`, job `image`) and by the release workflow before
anything is pushed. Needs docker and the dev environment (the fake GitHub in tests/github).

1. ``--help``; ``gate`` on the example: exit 0 for ranker v2, 1 for the regressed v3
   (against the committed baseline), in a copy of the repository mounted at /repo;
2. the Action as the runner runs a Docker action (INPUT_* with hyphens, GITHUB_* files,
   /github/workspace) against the fake GitHub on the host network: a PR gate that finds
   the artifact baseline and posts the sticky comment, and a bad input (exit 2, outputs
   still written);
3. SIGTERM: ``docker stop`` of a run blocked on a silent target ends it within seconds
   with exit 143 (evalkit is PID 1 and handles SIGTERM like Ctrl-C);
4. the stdlib and evalkit ship compiled bytecode.

``--platform`` runs every container as that platform (arm64 under QEMU on an amd64 host)
after checking the local image is of it: the release smoke-tests each image of the index.
The Action also runs once with ``isolate-target: true`` (the python target in a child
process as another user, docs/action.md).

Prints one line per check and exits 1 if any failed.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "github"))
sys.dont_write_bytecode = True

from actions_job import BASE_SHA, parse_github_output, pr_payload  # noqa: E402
from fake_github import FakeGitHub, make_zip  # noqa: E402

EXAMPLE = "examples/custom_client"
BASELINE = f"{EXAMPLE}/baseline.json"
results: list[tuple[str, bool, str]] = []
# Options of every `docker run` (--platform, when given).
RUN_OPTS: list[str] = []


def check(name: str, ok: bool, detail: str = "") -> None:
    results.append((name, ok, detail))
    print(f"{'ok  ' if ok else 'FAIL'} {name}{': ' + detail if detail else ''}", flush=True)


def docker(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    if args[:1] == ("run",):
        args = ("run", *RUN_OPTS, *args[1:])
    return subprocess.run(
        ["docker", *args], capture_output=True, text=True, timeout=timeout, check=False
    )


def tracked_copy(dest: Path) -> None:
    files = subprocess.run(
        ["git", "-C", str(ROOT), "ls-files", "-z"], capture_output=True, check=True
    ).stdout.decode()
    for rel in filter(None, files.split("\0")):
        src = ROOT / rel
        if src.is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)


def gate_runs(image: str, repo: Path) -> None:
    help_run = docker("run", "--rm", image, "--help")
    check("--help", help_run.returncode == 0 and " action " in help_run.stdout)
    for config, want in (("evalkit.yaml", 0), ("evalkit-regressed.yaml", 1)):
        run = docker(
            "run", "--rm", "-v", f"{repo}:/repo", "-w", "/repo", image,
            "gate", "--config", f"{EXAMPLE}/{config}", "--baseline", BASELINE,
        )  # fmt: skip
        head = (run.stdout.splitlines() or [""])[0]
        check(f"gate {config}", run.returncode == want, f"exit {run.returncode}, {head}")


def action_env(fake: FakeGitHub, files: dict[str, str], inputs: dict[str, str]) -> dict[str, str]:
    env = {
        "GITHUB_ACTIONS": "true",
        "GITHUB_EVENT_NAME": "pull_request",
        "GITHUB_EVENT_PATH": "/github/workflow/event.json",
        "GITHUB_REF": "refs/pull/7/merge",
        "GITHUB_SHA": "d" * 40,
        "GITHUB_REPOSITORY": fake.full_name,
        "GITHUB_REPOSITORY_ID": str(fake.repo_id),
        "GITHUB_API_URL": fake.api_url,
        "GITHUB_SERVER_URL": "https://github.example",
        "GITHUB_RUN_ID": "1",
        "GITHUB_WORKSPACE": "/github/workspace",
        "GITHUB_OUTPUT": f"/github/file_commands/{files['output']}",
        "GITHUB_STEP_SUMMARY": f"/github/file_commands/{files['summary']}",
        "INPUT_GITHUB-TOKEN": fake.token,
        "INPUT_CONFIG": f"{EXAMPLE}/evalkit.yaml",
        "INPUT_MODE": "gate",
        "INPUT_OUTPUT-DIR": ".evalkit/action",
    }
    env.update({f"INPUT_{k.upper()}": v for k, v in inputs.items()})
    return env


def run_action(
    image: str, fake: FakeGitHub, work: Path, inputs: dict[str, str]
) -> tuple[int, dict[str, str], str]:
    job = work / uuid.uuid4().hex[:8]
    workspace, commands, workflow = job / "workspace", job / "commands", job / "workflow"
    for folder in (workspace, commands, workflow):
        folder.mkdir(parents=True)
    tracked_copy(workspace)
    (workflow / "event.json").write_text(json.dumps(pr_payload(fake)))
    files = {"output": f"set_output_{uuid.uuid4()}", "summary": f"step_summary_{uuid.uuid4()}"}
    for name in files.values():
        (commands / name).touch()
    env = action_env(fake, files, inputs)
    cmd = ["run", *RUN_OPTS, "--rm", "--network", "host", "--workdir", "/github/workspace"]
    for name in env:
        cmd += ["-e", name]
    for host, inside in (
        (workspace, "/github/workspace"),
        (commands, "/github/file_commands"),
        (workflow, "/github/workflow"),
    ):
        cmd += ["-v", f"{host}:{inside}"]
    proc = subprocess.run(
        ["docker", *cmd, image, "action"],
        env={**{k: v for k, v in os.environ.items() if k in ("PATH", "DOCKER_HOST")}, **env},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    outputs = parse_github_output((commands / files["output"]).read_text())
    return proc.returncode, outputs, proc.stdout + proc.stderr


def action_runs(image: str, work: Path) -> None:
    fake = FakeGitHub()
    fake.start()
    try:
        name = "recipes"
        fake.add_artifact(
            make_zip({f"{name}.json": (ROOT / BASELINE).read_bytes()}), head_sha=BASE_SHA
        )
        code, out, log = run_action(image, fake, work, {})
        ok = (code, out.get("verdict"), out.get("comment"), out.get("baseline-sha")) == (
            0, "pass", "created", BASE_SHA,
        )  # fmt: skip
        check("action: PR gate", ok, f"exit {code}, outputs {out}" + ("" if ok else log[-800:]))
        check(
            "action: token masked", fake.token not in log.replace(f"::add-mask::{fake.token}", "")
        )
        code, out, log = run_action(image, fake, work, {"ISOLATE-TARGET": "true"})
        ok = (code, out.get("verdict"), out.get("comment")) == (0, "pass", "updated")
        check(
            "action: isolate-target", ok, f"exit {code}, outputs {out}" + ("" if ok else log[-800:])
        )
        code, out, log = run_action(image, fake, work, {"MODE": "bogus"})
        ok = (code, out.get("verdict"), out.get("exit-code")) == (2, "error", "2")
        check("action: bad input", ok, f"exit {code}, outputs {out}")
        check("action: OpenAPI", not fake.violations, "; ".join(fake.violations[:3]))
    finally:
        fake.stop()


def silent_server() -> tuple[int, threading.Event, Callable[[], None]]:
    """A TCP server that accepts and never answers; the event is set on the first accept."""
    server = socket.socket()
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    held: list[socket.socket] = []
    seen = threading.Event()

    def accept() -> None:
        while True:
            try:
                held.append(server.accept()[0])
            except OSError:
                return
            seen.set()

    threading.Thread(target=accept, daemon=True).start()

    def close() -> None:
        server.close()
        for conn in held:
            conn.close()

    return server.getsockname()[1], seen, close


def sigterm_run(image: str, repo: Path) -> None:
    port, seen, close = silent_server()
    config = yaml.safe_load((repo / EXAMPLE / "evalkit.yaml").read_text())
    for key in ("python_path", "baseline", "output"):
        config.pop(key, None)
    config["target"] = {
        "http": {"url": f"http://127.0.0.1:{port}/s", "extract": "ids", "timeout_s": 60}
    }
    (repo / EXAMPLE / "evalkit-silent.yaml").write_text(yaml.safe_dump(config))
    try:
        started = docker(
            "run", "-d", "--network", "host", "-v", f"{repo}:/repo", "-w", "/repo", image,
            "run", "--config", f"{EXAMPLE}/evalkit-silent.yaml", "--out", "/tmp/run.json",
        )  # fmt: skip
        cid = started.stdout.strip()
        if not seen.wait(60):  # the run is blocked on the target once it connected
            check("SIGTERM (docker stop)", False, "the run never reached the silent target")
            docker("rm", "-f", cid)
            return
        t0 = time.monotonic()
        docker("stop", cid, timeout=60)
        took = time.monotonic() - t0
        code = docker("inspect", "-f", "{{.State.ExitCode}}", cid).stdout.strip()
        docker("rm", cid)
        check("SIGTERM (docker stop)", took < 5 and code == "143", f"{took:.1f} s, exit {code}")
    finally:
        close()


def bytecode(image: str) -> None:
    probe = (
        "import importlib.util, os, evalkit.cli.session, sys; "
        "mods = [os, importlib.util, evalkit.cli.session]; "
        "missing = [m.__name__ for m in mods "
        "if not os.path.exists(importlib.util.cache_from_source(m.__file__))]; "
        "print(missing); sys.exit(1 if missing else 0)"
    )
    run = docker("run", "--rm", "--entrypoint", "python", image, "-c", probe)
    check("compiled bytecode shipped", run.returncode == 0, run.stdout.strip() + run.stderr[-300:])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--image", required=True)
    parser.add_argument("--platform", help="os/arch to run (the local image must be of it)")
    opts = parser.parse_args()
    if opts.platform:
        RUN_OPTS[:] = ["--platform", opts.platform]
        got = docker("image", "inspect", "-f", "{{.Os}}/{{.Architecture}}", opts.image)
        check("platform", got.stdout.strip() == opts.platform, got.stdout.strip() or got.stderr)
    with tempfile.TemporaryDirectory(prefix="evalkit-smoke-") as tmp:
        work = Path(tmp)
        repo = work / "repo"
        tracked_copy(repo)
        gate_runs(opts.image, repo)
        action_runs(opts.image, work / "jobs")
        sigterm_run(opts.image, repo)
        bytecode(opts.image)
    failed = [name for name, ok, _ in results if not ok]
    print(f"image smoke: {len(results) - len(failed)}/{len(results)} ok", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

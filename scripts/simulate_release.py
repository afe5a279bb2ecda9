"""Run the release workflow's steps against local registries, as a runner would (#25).

    sudo uv run python scripts/simulate_release.py [--work DIR] \\
        [--scenario private|public|downgrade|both|all]

Every ``run:`` step of .github/workflows/release.yml runs unmodified, in order, with bash
as GitHub runs it (``bash --noprofile --norc -eo pipefail``), the job's env and each
step's env (``${{ ... }}`` filled in from the simulated event, step outputs and secrets),
and stops at the first failing step. What stands in for GitHub:

* the checkout: this repository's tracked files at HEAD, committed into a fresh clone
  with ``origin/main`` on that commit and tagged ``v0.3.0``; its Dockerfile's
  ``PYTHON_BASE`` / ``PYTHON_BASE_PINNED`` name the stand-in base below (how a release
  on another registry would pin its base);
* ``actions/setup-python``: a venv of this interpreter (3.11 here, 3.12 on GitHub);
* Docker Hub: a local ``docker-registry`` (Debian's distribution 2.8) on 127.0.0.1 that
  holds a two-platform stand-in of ``python:3.12-slim-bookworm`` (Debian bookworm minbase
  + Debian's python3, amd64 and arm64 by debootstrap, arm64 under QEMU);
* ghcr.io: a second local registry; ``private`` asks for credentials (htpasswd) as a new
  ghcr.io package does of an anonymous client, ``public`` does not;
* github.com: the action repository is a local bare repository (git ``insteadOf``);
* ``sudo``: runs the command (the simulation runs as root);
* ``docker buildx`` (not packaged for Debian 12): a shim, scripts/release_sim_buildx.py,
  that builds each platform with the engine's own BuildKit (``DOCKER_BUILDKIT=1 docker
  build --platform``, arm64 under QEMU), pushes each and puts one OCI index over them,
  and writes buildx's metadata file; ``imagetools create`` re-tags the index's bytes.
  Every other docker command reaches a private dockerd (Debian's docker.io 20.10) started
  here, with its data under the work folder.

The ``private`` scenario must stop at "Users can pull the image without credentials"
with nothing published; ``public`` must run every step, and the action repository must
then hold the release whose action.yml pins the pushed index by digest, tagged vX.Y.Z
and vX, and the registry's vX tag the same index. ``downgrade`` releases v0.3.0, then
v0.2.9 (a patch on an older line, as 1.4.1 after 1.5.0), then re-runs v0.2.9's job: the
older release is published as its own tag only, with ``:v0``, ``@v0`` and ``main`` left on
v0.3.0 and the job summary saying so, and the re-run is refused before it builds (no
``:0.2.9`` under a new digest). ``all`` (the default) runs the three; ``both`` the first
two. Last line: ``simulate-release: ...``.
Needs root, apt (docker.io, docker-registry, debootstrap, qemu-user-static) and PyPI.
About 25 minutes the first time on 2 cores (debootstrap, the arm64 build and smoke test
under QEMU); the stand-in bases and the build cache are kept in the work folder.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
import warnings
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any, NamedTuple

import yaml

ROOT = Path(__file__).resolve().parents[1]
WORKFLOW = ROOT / ".github" / "workflows" / "release.yml"
TAG = "v0.3.0"
ACTOR = "release-sim"
ACTION_REPO = "skbugudi/evalkit-action"
BASE_REPO = "library/python"
BASE_TAG = "3.12-slim-bookworm"
ARCHES = ("amd64", "arm64")
REAL_DOCKER = "/usr/bin/docker"  # docker.io's client, the daemon's version
APT = ("docker.io", "docker-registry", "debootstrap", "qemu-user-static")


def say(text: str) -> None:
    print(f"== {text}", flush=True)


def sh(*cmd: str, **kwargs: Any) -> subprocess.CompletedProcess[str]:
    kwargs.setdefault("check", True)
    kwargs.setdefault("text", True)
    return subprocess.run(list(cmd), **kwargs)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_for(url: str, seconds: float = 30) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        try:
            with urllib.request.urlopen(url, timeout=2):
                return
        except urllib.error.HTTPError:
            return  # it answers (401 is an answer)
        except OSError:
            time.sleep(0.3)
    raise SystemExit(f"simulate-release: {url} did not answer in {seconds:g}s")


# -- the engine and the registries -----------------------------------------------------------


def install_packages(work: Path) -> None:
    missing = [p for p in APT if sh("dpkg", "-s", p, capture_output=True, check=False).returncode]
    if missing:
        say(f"apt-get install {' '.join(missing)}")
        with (work / "apt.log").open("w") as log:
            sh("apt-get", "update", "-q", stdout=log, stderr=log)
            sh("apt-get", "install", "-y", "-q", *missing, stdout=log, stderr=log,
               env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"})  # fmt: skip
    if not Path("/proc/sys/fs/binfmt_misc/register").exists():
        # A runner's systemd mounts it; the workflow's QEMU step checks the registration.
        sh("mount", "-t", "binfmt_misc", "binfmt_misc", "/proc/sys/fs/binfmt_misc")
    sh("update-binfmts", "--enable", "qemu-aarch64", check=False, capture_output=True)


@contextmanager
def dockerd(work: Path) -> Iterator[str]:
    d = work / "dockerd"
    (d / "data").mkdir(parents=True, exist_ok=True)
    (d / "exec").mkdir(exist_ok=True)
    host = f"unix://{d}/docker.sock"
    log = (d / "dockerd.log").open("w")
    proc = subprocess.Popen(
        ["dockerd", "--data-root", str(d / "data"), "--exec-root", str(d / "exec"),
         "--pidfile", str(d / "pid"), "-H", host, "--iptables=false", "--ip-masq=false",
         "--bridge=none", "--exec-opt", "native.cgroupdriver=cgroupfs"],
        stdout=log, stderr=log,
    )  # fmt: skip
    try:
        env = {**os.environ, "DOCKER_HOST": host}
        for _ in range(60):
            if sh(REAL_DOCKER, "info", env=env, capture_output=True, check=False).returncode == 0:
                break
            if proc.poll() is not None:
                raise SystemExit(f"simulate-release: dockerd exited (see {d / 'dockerd.log'})")
            time.sleep(1)
        yield host
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
        sh("umount", str(d / "exec" / "netns" / "default"), check=False, capture_output=True)
        log.close()


@contextmanager
def registry(work: Path, name: str, users: Mapping[str, str] | None = None) -> Iterator[str]:
    """A docker-registry on 127.0.0.1; with ``users``, it asks every client to log in."""
    folder = work / f"registry-{name}"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    port = free_port()
    config: dict[str, Any] = {
        "version": 0.1,
        "log": {"level": "warn"},
        "storage": {
            "filesystem": {"rootdirectory": str(folder / "data")},
            "delete": {"enabled": True},
        },
        "http": {"addr": f"127.0.0.1:{port}"},
    }
    if users:
        # bcrypt, the one hash docker-registry's htpasswd takes; crypt (until Python 3.13)
        # reaches libxcrypt's, so no package is needed for it.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            import crypt
        htpasswd = folder / "htpasswd"
        htpasswd.write_text(
            "".join(
                f"{u}:{crypt.crypt(p, crypt.mksalt(crypt.METHOD_BLOWFISH))}\n"
                for u, p in users.items()
            )
        )
        config["auth"] = {"htpasswd": {"realm": f"sim-{name}", "path": str(htpasswd)}}
    (folder / "config.yml").write_text(yaml.safe_dump(config))
    log = (folder / "registry.log").open("w")
    proc = subprocess.Popen(
        ["docker-registry", "serve", str(folder / "config.yml")], stdout=log, stderr=log
    )
    try:
        wait_for(f"http://127.0.0.1:{port}/v2/")
        yield f"127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait(30)
        log.close()


def put_index(
    host: str, repo: str, tag: str, manifests: list[dict[str, Any]], auth: str | None = None
) -> str:
    body = json.dumps(
        {
            "schemaVersion": 2,
            "mediaType": "application/vnd.oci.image.index.v1+json",
            "manifests": manifests,
        }
    ).encode()
    headers = {"Content-Type": "application/vnd.oci.image.index.v1+json"}
    if auth:
        headers["Authorization"] = auth
    request = urllib.request.Request(
        f"http://{host}/v2/{repo}/manifests/{tag}", body, headers, method="PUT"
    )
    with urllib.request.urlopen(request, timeout=60):
        pass
    return "sha256:" + hashlib.sha256(body).hexdigest()


def manifest_descriptor(
    host: str, repo: str, tag: str, platform: Mapping[str, str], auth: str | None = None
) -> dict[str, Any]:
    accept = (
        "application/vnd.docker.distribution.manifest.v2+json, "
        "application/vnd.oci.image.manifest.v1+json"
    )
    headers = {"Accept": accept, **({"Authorization": auth} if auth else {})}
    with urllib.request.urlopen(
        urllib.request.Request(f"http://{host}/v2/{repo}/manifests/{tag}", headers=headers),
        timeout=60,
    ) as r:
        body = r.read()
        media_type = r.headers["Content-Type"].split(";")[0]
    return {
        "mediaType": media_type,
        "digest": "sha256:" + hashlib.sha256(body).hexdigest(),
        "size": len(body),
        "platform": dict(platform),
    }


# -- the stand-in base -----------------------------------------------------------------------


def stand_in_rootfs(work: Path, arch: str) -> Path:
    """Debian bookworm minbase and Debian's python3 (3.11), laid out where the official
    image keeps its Python (/usr/local/bin, /usr/local/lib/python3.12), for ``arch``."""
    rootfs = work / f"rootfs-{arch}"
    if not (rootfs / ".debootstrap-done").exists():
        shutil.rmtree(rootfs, ignore_errors=True)
        say(f"debootstrap bookworm {arch} (arm64 under QEMU)")
        with (work / f"debootstrap-{arch}.log").open("w") as log:
            sh("debootstrap", f"--arch={arch}", "--variant=minbase",
               "--include=ca-certificates,netbase,tzdata,python3,python3-venv,python3-pip",
               "bookworm", str(rootfs), "http://deb.debian.org/debian",
               stdout=log, stderr=log)  # fmt: skip
        (rootfs / ".debootstrap-done").touch()
    (rootfs / "usr/lib/python3.11/EXTERNALLY-MANAGED").unlink(missing_ok=True)
    local = rootfs / "usr/local"
    for name, target in (("python", "/usr/bin/python3"), ("python3", "/usr/bin/python3"),
                         ("python3.12", "/usr/bin/python3"), ("pip", "/usr/bin/pip3")):  # fmt: skip
        link = local / "bin" / name
        link.unlink(missing_ok=True)
        link.symlink_to(target)
    lib = local / "lib/python3.12"
    if not lib.is_symlink():
        lib.symlink_to("/usr/lib/python3.11")
    # This machine's CAs (a TLS-terminating egress proxy's included), for pip and uv.
    shutil.copy2("/etc/ssl/certs/ca-certificates.crt", rootfs / "etc/ssl/certs/ca-certificates.crt")
    (rootfs / "etc/pip.conf").write_text("[global]\ncert = /etc/ssl/certs/ca-certificates.crt\n")
    (rootfs / "etc/uv").mkdir(exist_ok=True)
    (rootfs / "etc/uv/uv.toml").write_text("system-certs = true\n")
    for cache in ("var/lib/apt/lists", "var/cache/apt/archives"):
        for item in (rootfs / cache).glob("*"):
            if item.is_file():
                item.unlink()
    return rootfs


def push_stand_in_base(work: Path, env: Mapping[str, str], hub: str) -> str:
    """Both stand-ins pushed to the local "Docker Hub", one index over them; its digest."""
    entries = []
    for arch in ARCHES:
        rootfs = stand_in_rootfs(work, arch)
        ref = f"{hub}/{BASE_REPO}:{BASE_TAG}-{arch}"
        tar = subprocess.Popen(
            [
                "tar",
                "--numeric-owner",
                "-C",
                str(rootfs),
                "--exclude=./.debootstrap-done",
                "-c",
                ".",
            ],
            stdout=subprocess.PIPE,
        )
        sh(REAL_DOCKER, "import", "--platform", f"linux/{arch}",
           "--change", "ENV PATH=/usr/local/bin:/usr/local/sbin:/usr/sbin:/usr/bin:/sbin:/bin",
           "--change", "ENV LANG=C.UTF-8", "--change", 'CMD ["python3"]',
           "--message", f"simulate_release stand-in: debootstrap bookworm {arch} + Debian python3",
           "-", ref, stdin=tar.stdout, env=env, capture_output=True)  # fmt: skip
        tar.wait()
        sh(REAL_DOCKER, "push", ref, env=env, capture_output=True)
        entries.append(
            manifest_descriptor(
                hub, BASE_REPO, f"{BASE_TAG}-{arch}", {"os": "linux", "architecture": arch}
            )
        )
    return put_index(hub, BASE_REPO, BASE_TAG, entries)


# -- the checkout ----------------------------------------------------------------------------


def checkout(work: Path, hub: str, base_digest: str, tag: str = TAG) -> tuple[Path, str]:
    """This repository's tracked files at HEAD, committed afresh, on origin/main, tagged."""
    repo = work / "checkout"
    shutil.rmtree(repo, ignore_errors=True)
    repo.mkdir()
    files = sh("git", "-C", str(ROOT), "ls-files", "-z", capture_output=True).stdout.split("\0")
    for rel in filter(None, files):
        src = ROOT / rel
        if src.is_file():
            (repo / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, repo / rel)
    dockerfile = repo / "Dockerfile"
    text = dockerfile.read_text()
    text, n1 = re.subn(
        r"^ARG PYTHON_BASE_PINNED=\S+$",
        f"ARG PYTHON_BASE_PINNED={hub}/{BASE_REPO}:{BASE_TAG}@{base_digest}",
        text,
        flags=re.M,
    )
    text, n2 = re.subn(
        r"^ARG PYTHON_BASE=\S+$", f"ARG PYTHON_BASE={hub}/{BASE_REPO}:{BASE_TAG}", text, flags=re.M
    )
    if (n1, n2) != (1, 1):
        raise SystemExit(
            "simulate-release: the Dockerfile lacks ARG PYTHON_BASE / PYTHON_BASE_PINNED"
        )
    dockerfile.write_text(text)
    git = ["git", "-C", str(repo), "-c", "user.name=sim", "-c", "user.email=sim@example.invalid"]
    sh(*git, "init", "-q", "-b", "main")
    sh(*git, "add", "-A")
    sh(*git, "commit", "-q", "-m", "release simulation")
    sh(*git, "tag", "-a", "-m", "release", tag)
    sh(*git, "update-ref", "refs/remotes/origin/main", "HEAD")
    sha = sh(*git, "rev-parse", "HEAD", capture_output=True).stdout.strip()
    return repo, sha


# -- the runner ------------------------------------------------------------------------------

_EXPR = re.compile(r"\$\{\{\s*([\w.-]+)\s*\}\}")


def fill(value: str, context: Mapping[str, str]) -> str:
    def one(m: re.Match[str]) -> str:
        if m.group(1) not in context:
            raise SystemExit(
                f"simulate-release: the workflow uses ${{{{ {m.group(1)} }}}}, which the "
                "simulation does not provide"
            )
        return context[m.group(1)]

    return _EXPR.sub(one, value)


def read_outputs(path: Path) -> dict[str, str]:
    outputs: dict[str, str] = {}
    for line in path.read_text().splitlines() if path.exists() else ():
        name, sep, value = line.partition("=")
        if sep:
            outputs[name] = value
    return outputs


def event_context(sha: str, token: str, action_token: str, tag: str = TAG) -> dict[str, str]:
    """What ``${{ ... }}`` in the release job may name, besides earlier steps' outputs."""
    return {
        "github.ref_name": tag,
        "github.sha": sha,
        "github.token": token,
        "github.actor": ACTOR,
        "github.event.repository.default_branch": "main",
        "secrets.ACTION_REPO_TOKEN": action_token,
    }


def run_job(
    work: Path,
    scenario: str,
    context: dict[str, str],
    job_env: Mapping[str, str],
    base_env: Mapping[str, str],
    repo: Path,
) -> list[tuple[str, str]]:
    """Each step in order; (name, ok|FAILED|skipped|simulated) per step."""
    job = yaml.safe_load(WORKFLOW.read_text())["jobs"]["release"]
    done: list[tuple[str, str]] = []
    failed = False
    for index, step in enumerate(job["steps"]):
        name = str(step.get("name") or step.get("uses"))
        if failed:
            done.append((name, "skipped"))
            continue
        if "uses" in step:
            done.append((name, "simulated"))  # checkout and setup-python: done above
            continue
        outputs = work / f"{scenario}-step{index}.out"
        outputs.write_text("")
        env = {**base_env, **{k: fill(str(v), context) for k, v in job_env.items()}}
        env.update({k: fill(str(v), context) for k, v in (step.get("env") or {}).items()})
        env["GITHUB_OUTPUT"] = str(outputs)
        say(f"[{scenario}] step: {name}")
        proc = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", str(step["run"])],
            cwd=repo,
            env=env,
            check=False,
        )
        if proc.returncode != 0:
            failed = True
            done.append((name, f"FAILED (exit {proc.returncode})"))
            continue
        for key, value in read_outputs(outputs).items():
            if "id" in step:
                context[f"steps.{step['id']}.outputs.{key}"] = value
        done.append((name, "ok"))
    return done


def shims(work: Path, python_bin: Path) -> Path:
    folder = work / "shims"
    folder.mkdir(exist_ok=True)
    (folder / "sudo").write_text('#!/bin/sh\nexec "$@"\n')
    # Python, not sh: a POSIX shell drops variables whose names are not identifiers, and
    # the Action's inputs (INPUT_GITHUB-TOKEN) have hyphens.
    buildx = str(ROOT / "scripts/release_sim_buildx.py")
    (folder / "docker").write_text(
        f"#!{sys.executable}\n"
        "import os, sys\n"
        "if sys.argv[1:2] == ['buildx']:\n"
        f"    os.execv(sys.executable, [sys.executable, {buildx!r}, *sys.argv[2:]])\n"
        f"os.execv({REAL_DOCKER!r}, [{REAL_DOCKER!r}, *sys.argv[1:]])\n"
    )
    for name in ("python", "python3"):
        link = folder / name
        link.unlink(missing_ok=True)
        link.symlink_to(python_bin)
    for path in folder.iterdir():
        if not path.is_symlink():
            path.chmod(0o755)
    return folder


# The downgrade scenario's releases, in one registry and action repository, in order: the
# newest (TAG), a patch on an older line released after it (1.4.1 after 1.5.0), and a
# re-run of that older release's job. Neither of the last two may move :v0 or @v0.
OLDER_TAG = "v0.2.9"
DOWNGRADE_JOBS = (("newest", TAG), ("older", OLDER_TAG), ("rerun-older", OLDER_TAG))


def scenario_run(
    work: Path, scenario: str, docker_host: str, hub: str, base_digest: str, python_bin: Path
) -> tuple[bool, str]:
    token = base64.b16encode(os.urandom(12)).decode().lower()
    users = {ACTOR: token} if scenario == "private" else None
    with registry(work, f"ghcr-{scenario}", users) as ghcr:
        action_repo = work / f"action-repo-{scenario}.git"
        shutil.rmtree(action_repo, ignore_errors=True)
        sh("git", "init", "-q", "--bare", "-b", "main", str(action_repo))
        home = work / f"home-{scenario}"
        shutil.rmtree(home, ignore_errors=True)
        home.mkdir()
        action_token = "sim-action-repo-token"
        gitconfig = home / ".gitconfig"
        gitconfig.write_text(
            f'[url "file://{action_repo}"]\n\tinsteadOf = https://x-access-token:{action_token}@github.com/{ACTION_REPO}.git\n'
        )
        job_env = yaml.safe_load(WORKFLOW.read_text())["jobs"]["release"]["env"]
        job_env = {**job_env, "REGISTRY": ghcr, "IMAGE": f"{ghcr}/{ACTION_REPO}"}
        shim_dir = shims(work, python_bin)
        jobs = DOWNGRADE_JOBS if scenario == "downgrade" else ((scenario, TAG),)
        runs: list[JobRun] = []
        for label, tag in jobs:
            repo, sha = checkout(work, hub, base_digest, tag)
            runner_temp = work / f"runner-temp-{label}"
            shutil.rmtree(runner_temp, ignore_errors=True)
            runner_temp.mkdir()
            summary = runner_temp / "step-summary.md"
            summary.write_text("")
            context = event_context(sha, token if users else "no-auth-registry", action_token, tag)
            path = f"{shim_dir}{os.pathsep}{python_bin.parent}{os.pathsep}{os.environ['PATH']}"
            base_env = {
                "PATH": path,
                "HOME": str(home),
                "GIT_CONFIG_GLOBAL": str(gitconfig),
                "DOCKER_HOST": docker_host,
                "RUNNER_TEMP": str(runner_temp),
                "GITHUB_SHA": sha,
                "GITHUB_WORKSPACE": str(repo),
                "GITHUB_STEP_SUMMARY": str(summary),
                "CI": "true",
                "LANG": "C.UTF-8",
                "DEBIAN_FRONTEND": "noninteractive",
                **{
                    k: v
                    for k, v in os.environ.items()
                    if k.endswith(("_CA_BUNDLE", "CERT_FILE", "CERT_DIR")) or k.startswith("PIP_")
                },
            }
            steps = run_job(work, label, context, job_env, base_env, repo)
            say(f"[{label}] steps ({tag})")
            for name, status in steps:
                print(f"   {status:<16} {name}", flush=True)
            runs.append(
                JobRun(label, tag, steps, summary.read_text(), published(action_repo, ghcr))
            )
        if scenario == "downgrade":
            return downgrade_verdict(runs)
        return verdict(scenario, runs[0].steps, ghcr, action_repo)


class Published(NamedTuple):
    """What users can reach after a job: the action repository's refs and the image tags."""

    refs: Mapping[str, str]  # refname -> sha
    image_tags: Mapping[str, str]  # tag -> manifest digest


class JobRun(NamedTuple):
    label: str
    tag: str
    steps: list[tuple[str, str]]
    summary: str
    after: Published


def published(action_repo: Path, ghcr: str) -> Published:
    listed = sh(
        "git", "--git-dir", str(action_repo), "for-each-ref", "--format=%(objectname) %(refname)",
        capture_output=True,
    ).stdout.split("\n")  # fmt: skip
    refs: dict[str, str] = {}
    for line in filter(str.strip, listed):
        sha, _, ref = line.partition(" ")
        refs[ref] = sha
    tags: dict[str, str] = {}
    # The major and release tags name indexes: a registry refuses them to a client that
    # does not accept an index.
    accept = (
        "application/vnd.oci.image.index.v1+json, "
        "application/vnd.docker.distribution.manifest.list.v2+json"
    )
    for tag in ("v0", TAG.removeprefix("v"), OLDER_TAG.removeprefix("v")):
        request = urllib.request.Request(
            f"http://{ghcr}/v2/{ACTION_REPO}/manifests/{tag}", headers={"Accept": accept}
        )
        # not pushed (or private: the private scenario reads no tag)
        with suppress(urllib.error.HTTPError), urllib.request.urlopen(request, timeout=60) as r:
            tags[tag] = "sha256:" + hashlib.sha256(r.read()).hexdigest()
    return Published(refs, tags)


def downgrade_verdict(runs: list[JobRun]) -> tuple[bool, str]:
    """The newest release moves the major tags; the older one and its re-run move nothing."""
    newest, older, rerun = runs
    problems: list[str] = []
    if any(not s.startswith(("ok", "simulated")) for _, s in newest.steps + older.steps):
        problems.append("a step of the newest or the older release failed")
    major = newest.after.refs.get("refs/tags/v0")
    if major is None or major != newest.after.refs.get(f"refs/tags/{TAG}"):
        problems.append(f"after {TAG}, @v0 is not {TAG}")
    image_major = newest.after.image_tags.get("v0")
    if image_major is None or image_major != newest.after.image_tags.get(TAG.removeprefix("v")):
        problems.append(f"after {TAG}, :v0 is not :{TAG.removeprefix('v')}")
    for run in (older, rerun):
        for ref in ("refs/tags/v0", "refs/heads/main"):
            if run.after.refs.get(ref) != newest.after.refs.get(ref):
                problems.append(f"[{run.label}] moved {ref}")
        if run.after.image_tags.get("v0") != newest.after.image_tags.get("v0"):
            problems.append(f"[{run.label}] moved :v0")
    if f"refs/tags/{OLDER_TAG}" not in older.after.refs:
        problems.append(f"{OLDER_TAG} was not published")
    if "v0 not moved" not in older.summary or "is older than" not in older.summary:
        problems.append("the older release's job summary does not say the major tags stayed")
    refused = "Refuse a version the action repository already has"
    if not dict(rerun.steps).get(refused, "").startswith("FAILED"):
        problems.append("the re-run of the older release was not refused")
    older_image = OLDER_TAG.removeprefix("v")
    if rerun.after.image_tags.get(older_image) != older.after.image_tags.get(older_image):
        problems.append(f"the re-run re-pushed :{older_image}")
    if problems:
        return False, "downgrade: " + "; ".join(problems)
    return True, (
        f"downgrade: {TAG} moved :v0 and @v0; {OLDER_TAG} after it was published as its tag "
        "only, :v0, @v0 and main unmoved, said in the job summary; its re-run refused before "
        "building"
    )


def verdict(
    scenario: str, steps: list[tuple[str, str]], ghcr: str, action_repo: Path
) -> tuple[bool, str]:
    status = dict(steps)
    pull = "Users can pull the image without credentials"
    push = "Build and push the two-architecture image"
    refs = sh(
        "git",
        "--git-dir",
        str(action_repo),
        "for-each-ref",
        "--format=%(refname)",
        capture_output=True,
    ).stdout.split()
    if scenario == "private":
        ok = status.get(push) == "ok" and status.get(pull, "").startswith("FAILED") and not refs
        return ok, (
            f"private: pushed {'yes' if status.get(push) == 'ok' else 'NO'}, anonymous pull "
            f"{'refused' if status.get(pull, '').startswith('FAILED') else 'NOT refused'}, "
            f"published {len(refs)} refs (want 0)"
        )
    if any(s.startswith(("FAILED", "skipped")) for s in status.values()):
        first = next(n for n, s in steps if s.startswith("FAILED"))
        return False, f"public: step {first!r} failed"
    action_yml = sh(
        "git", "--git-dir", str(action_repo), "show", "main:action.yml", capture_output=True
    ).stdout
    m = re.search(r'image: "docker://([^"@]+)@(sha256:[0-9a-f]{64})"', action_yml)
    tags = sorted(r.removeprefix("refs/tags/") for r in refs if r.startswith("refs/tags/"))
    if m is None:
        return False, "public: the released action.yml pins no image digest"
    image, digest = m.groups()
    # The pinned digest is a two-platform index, the major tag names it, every part is public.
    tool = str(ROOT / "scripts/release_image.py")
    checks = [
        sh(sys.executable, tool, "public", f"{image}@{digest}", "--platform", "linux/amd64",
           "--platform", "linux/arm64", check=False, capture_output=True),
        sh(sys.executable, tool, "same-manifest", f"{image}:v0", digest,
           check=False, capture_output=True),
    ]  # fmt: skip
    ok = (
        image == f"{ghcr}/{ACTION_REPO}"
        and tags == sorted([TAG, "v0"])
        and all(c.returncode == 0 for c in checks)
    )
    return ok, (
        f"public: every step ok, action.yml pins {digest[:19]}... (an index of linux/amd64 + "
        f"linux/arm64: {'yes' if checks[0].returncode == 0 else 'NO'}), action repo tags "
        f"{', '.join(tags)}, image :v0 = that index: {'yes' if checks[1].returncode == 0 else 'NO'}"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--work",
        type=Path,
        default=Path(os.environ.get("SIMULATE_RELEASE_WORK", "/tmp/simulate-release")),
    )
    parser.add_argument(
        "--scenario", choices=("private", "public", "downgrade", "both", "all"), default="all"
    )
    opts = parser.parse_args()
    if os.geteuid() != 0:
        raise SystemExit("simulate-release: needs root (dockerd, debootstrap, binfmt_misc)")
    work = opts.work.resolve()
    work.mkdir(parents=True, exist_ok=True)
    install_packages(work)
    venv = work / "setup-python"
    if not (venv / "bin/python").exists():
        sh(sys.executable, "-m", "venv", str(venv))
    started = time.monotonic()
    results = []
    with dockerd(work) as docker_host, registry(work, "hub") as hub:
        env = {**os.environ, "DOCKER_HOST": docker_host}
        say("stand-in base (both architectures) on the local Docker Hub")
        base_digest = push_stand_in_base(work, env, hub)
        print(f"   {hub}/{BASE_REPO}:{BASE_TAG}@{base_digest}", flush=True)
        chosen = {"both": ("private", "public"), "all": ("private", "public", "downgrade")}
        for scenario in chosen.get(opts.scenario, (opts.scenario,)):
            results.append(
                scenario_run(work, scenario, docker_host, hub, base_digest, venv / "bin/python")
            )
    minutes = (time.monotonic() - started) / 60
    ok = all(r[0] for r in results)
    print(
        f"simulate-release: {'ok' if ok else 'FAILED'} in {minutes:.0f} min: "
        + "; ".join(r[1] for r in results),
        flush=True,
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

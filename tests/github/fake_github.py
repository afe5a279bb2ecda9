"""A loopback stand-in for GitHub's REST API, faithful where evalkit depends on it.

Two real HTTP servers: the API on 127.0.0.1 and a "blob storage" host on 127.0.0.2
(another loopback address, so a leaked ``Authorization`` header would be crossing
hosts, as it would on GitHub). Every request the API receives and every response it
sends is checked against the vendored OpenAPI description; a mismatch is recorded in
``violations`` and fails the test at teardown.

Implemented: artifacts (list, paginated with Link headers; download as a 302 to the
blob host), workflow runs, issue comments (list paginated / create / update), pulls,
repository, contents, the Git Data API (blobs, trees, commits, refs) over a small
in-memory object store, and the compare API over the code history in that store.
Faults (403/404/409/410/422/5xx) are injected per route.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import re
import threading
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from openapi_check import OpenApi

from evalkit.github.client import default_github_factory

_SPEC = OpenApi()


def deep_update(base: dict[str, Any], overrides: dict[str, Any]) -> dict[str, Any]:
    for key, value in overrides.items():
        if isinstance(value, dict) and isinstance(base.get(key), dict):
            deep_update(base[key], value)
        else:
            base[key] = value
    return base


def make_zip(files: dict[str, bytes], *, symlinks: dict[str, str] | None = None) -> bytes:
    """A zip archive as upload-artifact would make it (plus optional hostile entries)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in files.items():
            zf.writestr(name, data)
        for name, target in (symlinks or {}).items():
            info = zipfile.ZipInfo(name)
            info.external_attr = (0o120777 << 16) | 0
            zf.writestr(info, target)
    return buffer.getvalue()


@dataclass
class Recorded:
    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: Any
    status: int = 0
    fault: bool = False


@dataclass
class Fault:
    method: str
    path: re.Pattern[str]
    status: int
    times: int
    message: str
    headers: dict[str, str] = field(default_factory=dict)
    after: Callable[[], object] | None = None  # runs the real handler first (a lost reply)


@dataclass
class Hook:
    method: str
    path: re.Pattern[str]
    action: Callable[[], object]


def _sha1(data: bytes) -> str:
    return hashlib.sha1(data).hexdigest()


@dataclass
class GitStore:
    """Just enough of git: blobs, flat trees (path -> blob sha), commits and refs."""

    blobs: dict[str, bytes] = field(default_factory=dict)
    trees: dict[str, dict[str, str]] = field(default_factory=dict)
    commits: dict[str, dict[str, Any]] = field(default_factory=dict)
    refs: dict[str, str] = field(default_factory=dict)  # "heads/x" -> commit sha
    # annotated tags: tag object sha -> {"tag": name, "object": {"type": ..., "sha": ...}}
    tag_objects: dict[str, dict[str, Any]] = field(default_factory=dict)

    def put_blob(self, data: bytes) -> str:
        sha = _sha1(b"blob %d\0" % len(data) + data)
        self.blobs[sha] = data
        return sha

    def put_tree(self, entries: dict[str, str]) -> str:
        sha = _sha1(json.dumps(sorted(entries.items())).encode())
        self.trees[sha] = dict(entries)
        return sha

    def put_commit(self, message: str, tree: str, parents: list[str]) -> str:
        sha = _sha1(json.dumps([message, tree, parents, len(self.commits)]).encode())
        self.commits[sha] = {"message": message, "tree": tree, "parents": parents}
        return sha

    def annotated_tag(self, name: str, target: str, target_type: str = "commit") -> str:
        """``git tag -a name target``: a tag object, and refs/tags/name pointing at it."""
        sha = _sha1(json.dumps(["tag", name, target]).encode())
        self.tag_objects[sha] = {"tag": name, "object": {"type": target_type, "sha": target}}
        self.refs[f"tags/{name}"] = sha
        return sha

    def push(self, branch: str = "main", sha: str | None = None) -> str:
        """A code commit on ``branch`` (its parent the branch's head), ``sha`` if given.

        The code history the compare API answers from: promotions and workflow runs name
        these commits.
        """
        parent = self.refs.get(f"heads/{branch}")
        if sha is None:
            sha = self.put_commit("code", self.put_tree({}), [parent] if parent else [])
        elif sha not in self.commits:
            self.commits[sha] = {
                "message": f"code {sha[:7]}",
                "tree": self.put_tree({}),
                "parents": [parent] if parent else [],
            }
        self.refs[f"heads/{branch}"] = sha
        return sha

    def resolve(self, name: str) -> str | None:
        """A commit-ish to a commit sha, in git's order: a sha, then tags, then branches.

        As in ``git rev-parse``, a tag shadows a branch of the same name: a tag called
        ``main`` is what ``main`` means. (Callers that mean the branch pass its sha.)
        """
        if name in self.commits:
            return name
        for ref in (name, f"tags/{name}", f"heads/{name}"):
            target = self.refs.get(ref.removeprefix("refs/"))
            while target in self.tag_objects:
                target = self.tag_objects[target]["object"]["sha"]
            if target in self.commits:
                return target
        return None

    def ancestors(self, sha: str) -> list[str]:
        """``sha`` and every commit it descends from, nearest first (``git rev-list``)."""
        seen: list[str] = []
        pending = [sha]
        while pending:
            current = pending.pop(0)
            if current in seen or current not in self.commits:
                continue
            seen.append(current)
            pending.extend(self.commits[current]["parents"])
        return seen

    def file_at(self, branch: str, path: str) -> bytes | None:
        # like the contents API, ``ref`` may be a branch name or a commit sha
        commit = self.refs.get(f"heads/{branch}") or (branch if branch in self.commits else None)
        if commit is None:
            return None
        blob = self.trees[self.commits[commit]["tree"]].get(path)
        return None if blob is None else self.blobs[blob]

    def commit_files(self, branch: str, files: dict[str, bytes], message: str = "seed") -> str:
        """Commit directly (as another writer would), creating the branch if needed."""
        parent = self.refs.get(f"heads/{branch}")
        entries = dict(self.trees[self.commits[parent]["tree"]]) if parent else {}
        for path, data in files.items():
            entries[path] = self.put_blob(data)
        sha = self.put_commit(message, self.put_tree(entries), [parent] if parent else [])
        self.refs[f"heads/{branch}"] = sha
        return sha


class FakeGitHub:
    """State of one fake repository plus the two servers that expose it."""

    def __init__(self, *, prefix: str = "", token: str = "test-token") -> None:
        self.prefix = prefix  # "/api/v3" to look like GitHub Enterprise Server
        self.token = token
        self.owner = "octo"
        self.repo = "widgets"
        self.repo_id = 4242
        self.default_branch = "main"
        self.per_page_default = 30
        self.max_per_page = 100  # GitHub's cap; tests lower it to force several pages
        self.contents_inline_limit = 1_000_000
        self.artifacts: list[dict[str, Any]] = []
        self.archives: dict[int, bytes] = {}
        self.gone_archives: set[int] = set()
        self.runs: dict[int, dict[str, Any]] = {}
        self.comments: dict[int, list[dict[str, Any]]] = {}
        self.pulls: dict[int, dict[str, Any]] = {}
        # GET /user: None answers 403 as GitHub does for the job's installation token.
        self.token_user: str | None = None
        # Blob URLs that answer 403 (an expired signature) this many more times.
        self.expired_blob_answers = 0
        self.git = GitStore()
        self.faults: list[Fault] = []
        self.hooks: list[Hook] = []
        self.requests: list[Recorded] = []
        self.blob_requests: list[Recorded] = []
        self.violations: list[str] = []
        self._next_id = 1000
        self._lock = threading.RLock()
        self._servers: list[ThreadingHTTPServer] = []
        self.api_base = ""
        self.blob_base = ""

    # -- lifecycle ---------------------------------------------------------------------

    def start(self) -> None:
        api = _serve(self, _ApiHandler, "127.0.0.1")
        try:
            blob = _serve(self, _BlobHandler, "127.0.0.2")
        except OSError:  # a loopback without 127.0.0.2: still a different origin
            blob = _serve(self, _BlobHandler, "127.0.0.1")
        self._servers = [api, blob]
        self.api_base = f"http://127.0.0.1:{api.server_address[1]}{self.prefix}"
        blob_host = str(blob.server_address[0])
        self.blob_base = f"http://{blob_host}:{blob.server_address[1]}"

    def stop(self) -> None:
        for server in self._servers:
            server.shutdown()
            server.server_close()

    @property
    def api_url(self) -> str:
        return self.api_base

    @property
    def full_name(self) -> str:
        return f"{self.owner}/{self.repo}"

    def repo_url(self, rest: str = "") -> str:
        return f"{self.api_base}/repos/{self.full_name}{rest}"

    def new_id(self) -> int:
        with self._lock:
            self._next_id += 1
            return self._next_id

    # -- scenario builders -------------------------------------------------------------

    def fail(
        self,
        method: str,
        path_regex: str,
        status: int,
        *,
        times: int = 1,
        message: str = "",
        headers: dict[str, str] | None = None,
        after_handling: bool = False,
    ) -> None:
        """The next ``times`` matching requests get ``status`` with a GitHub error body.

        ``after_handling``: the request is carried out first and only the answer is lost
        (a 5xx after GitHub stored the comment).
        """
        self.faults.append(
            Fault(
                method,
                re.compile(path_regex),
                status,
                times,
                message or f"HTTP {status}",
                dict(headers or {}),
                after=(lambda: None) if after_handling else None,
            )
        )

    def before(self, method: str, path_regex: str, action: Callable[[], object]) -> None:
        """Run ``action`` once, just before the first matching request is handled."""
        self.hooks.append(Hook(method, re.compile(path_regex), action))

    def add_run(
        self,
        *,
        event: str = "push",
        head_branch: str = "main",
        head_sha: str = "a" * 40,
        head_repository_id: int | None = None,
        on_default_branch: bool | None = None,
    ) -> int:
        """A workflow run; its commit joins the default branch's history when it is on it.

        ``on_default_branch`` None: a run of this repository that names the default branch
        built a commit of that branch (pushed on top unless already there). False models a
        tag named like the branch (``head_branch`` is the tag's name): the commit is not
        on the branch.
        """
        run_id = self.new_id()
        run = _SPEC.example("workflow-run")
        head_repo_id = self.repo_id if head_repository_id is None else head_repository_id
        if on_default_branch is None:
            on_default_branch = head_branch == self.default_branch and head_repo_id == self.repo_id
        if on_default_branch and head_sha not in self.git.commits:
            self.git.push(self.default_branch, head_sha)
        deep_update(
            run,
            {
                "id": run_id,
                "event": event,
                "head_branch": head_branch,
                "head_sha": head_sha,
                "url": self.repo_url(f"/actions/runs/{run_id}"),
                "repository": {"id": self.repo_id, "full_name": self.full_name},
                "head_repository": {"id": head_repo_id},
                "head_repository_id": head_repo_id,
                "repository_id": self.repo_id,
            },
        )
        self.runs[run_id] = run
        return run_id

    def add_artifact(
        self,
        archive: bytes,
        *,
        name: str = "evalkit-baseline",
        event: str = "push",
        head_branch: str = "main",
        head_sha: str = "a" * 40,
        head_repository_id: int | None = None,
        expired: bool = False,
        created_at: str = "2024-05-01T00:00:00Z",
        expires_at: str = "2999-01-01T00:00:00Z",
        gone: bool = False,
        on_default_branch: bool | None = None,
    ) -> int:
        run_id = self.add_run(
            event=event,
            head_branch=head_branch,
            head_sha=head_sha,
            head_repository_id=head_repository_id,
            on_default_branch=on_default_branch,
        )
        artifact_id = self.new_id()
        artifact = _SPEC.example("artifact")
        deep_update(
            artifact,
            {
                "id": artifact_id,
                "node_id": f"A_{artifact_id}",
                "name": name,
                "size_in_bytes": len(archive),
                "url": self.repo_url(f"/actions/artifacts/{artifact_id}"),
                "archive_download_url": self.repo_url(f"/actions/artifacts/{artifact_id}/zip"),
                "expired": expired,
                "created_at": created_at,
                "updated_at": created_at,
                "expires_at": expires_at,
                "workflow_run": {
                    "id": run_id,
                    "repository_id": self.repo_id,
                    "head_repository_id": self.runs[run_id]["head_repository_id"],
                    "head_branch": head_branch,
                    "head_sha": head_sha,
                },
            },
        )
        self.artifacts.append(artifact)
        self.archives[artifact_id] = archive
        if gone:
            self.gone_archives.add(artifact_id)
        return artifact_id

    def _user(self, login: str, kind: str) -> dict[str, Any]:
        user = _SPEC.example("simple-user")
        return deep_update(user, {"login": login, "type": kind, "id": abs(hash(login)) % 10**6})

    def add_comment(
        self,
        issue: int,
        body: str,
        *,
        login: str = "someone",
        kind: str = "User",
        minimized: str | None = None,
    ) -> dict[str, Any]:
        comment_id = self.new_id()
        comment = _SPEC.example("issue-comment")
        deep_update(
            comment,
            {
                "id": comment_id,
                "node_id": f"IC_{comment_id}",
                "body": body,
                "user": self._user(login, kind),
                "url": self.repo_url(f"/issues/comments/{comment_id}"),
                "html_url": f"https://github.invalid/{self.full_name}/pull/{issue}"
                f"#issuecomment-{comment_id}",
                "issue_url": self.repo_url(f"/issues/{issue}"),
                "author_association": "NONE",
                "minimized": None if minimized is None else {"reason": minimized},
            },
        )
        self.comments.setdefault(issue, []).append(comment)
        result: dict[str, Any] = comment
        return result

    def add_pull(self, number: int, *, head_sha: str, base_repo: str | None = None) -> None:
        pull = _SPEC.example("pull-request")
        deep_update(
            pull,
            {
                "number": number,
                "url": self.repo_url(f"/pulls/{number}"),
                "head": {"sha": head_sha},
                "base": {"repo": {"full_name": base_repo or self.full_name}},
            },
        )
        self.pulls[number] = pull

    def comment_bodies(self, issue: int) -> list[str]:
        return [c["body"] for c in self.comments.get(issue, [])]

    def api_calls(self, method: str | None = None, contains: str = "") -> list[Recorded]:
        return [
            r
            for r in self.requests
            if (method is None or r.method == method) and contains in r.path
        ]

    # -- request handling --------------------------------------------------------------

    def handle(
        self, method: str, path: str, query: dict[str, list[str]], body: Any
    ) -> tuple[int, dict[str, str], Any]:
        """(status, extra headers, JSON body or None) for one API request."""
        for hook in list(self.hooks):
            if hook.method == method and hook.path.search(path):
                self.hooks.remove(hook)
                hook.action()
        for fault in self.faults:
            if fault.times > 0 and fault.method == method and fault.path.search(path):
                fault.times -= 1
                self.requests[-1].fault = True
                if fault.after is not None:
                    self._route(method, path, query, body)
                return fault.status, dict(fault.headers), _error(fault.message)
        return self._route(method, path, query, body)

    def _route(
        self, method: str, path: str, query: dict[str, list[str]], body: Any
    ) -> tuple[int, dict[str, str], Any]:
        if path == "/user" and method == "GET":
            if self.token_user is None:
                return 403, {}, _error("Resource not accessible by integration")
            user = _SPEC.example("private-user")
            return 200, {}, deep_update(user, {"login": self.token_user, "type": "User"})
        repo_prefix = f"/repos/{self.full_name}"
        if not path.startswith(repo_prefix):
            return 404, {}, _error("Not Found")
        rest = path[len(repo_prefix) :]
        for pattern, route_method, handler in _ROUTES:
            m = re.fullmatch(pattern, rest)
            if m and route_method == method:
                result: tuple[int, dict[str, str], Any] = handler(self, m, query, body)
                return result
        return 404, {}, _error("Not Found")

    def paginate(
        self, items: list[Any], query: dict[str, list[str]], path: str
    ) -> tuple[list[Any], dict[str, str]]:
        per_page = int(query.get("per_page", [str(self.per_page_default)])[0])
        per_page = max(1, min(per_page, self.max_per_page))
        page = int(query.get("page", ["1"])[0])
        last = max(1, -(-len(items) // per_page))
        chunk = items[(page - 1) * per_page : page * per_page]
        keep = {k: v[0] for k, v in query.items() if k not in ("page", "per_page")}
        extra = "".join(f"&{k}={v}" for k, v in keep.items())

        def link(p: int) -> str:
            return f"<{self.api_base}{path}?per_page={per_page}&page={p}{extra}>"

        links = []
        if page < last:
            links += [f'{link(page + 1)}; rel="next"', f'{link(last)}; rel="last"']
        if page > 1:
            links += [f'{link(1)}; rel="first"', f'{link(page - 1)}; rel="prev"']
        return chunk, ({"Link": ", ".join(links)} if links else {})


def _error(message: str) -> dict[str, Any]:
    return {"message": message, "documentation_url": "https://docs.github.com/rest"}


# -- routes -------------------------------------------------------------------------------

Route = Callable[
    [FakeGitHub, "re.Match[str]", dict[str, list[str]], Any], tuple[int, dict[str, str], Any]
]


def _repo(fake: FakeGitHub, m: re.Match[str], q: dict[str, list[str]], b: Any) -> Any:
    repo = _SPEC.example("full-repository")
    deep_update(
        repo,
        {
            "id": fake.repo_id,
            "name": fake.repo,
            "full_name": fake.full_name,
            "default_branch": fake.default_branch,
            "url": fake.repo_url(),
        },
    )
    return 200, {}, repo


def _list_artifacts(fake: FakeGitHub, m: re.Match[str], q: dict[str, list[str]], b: Any) -> Any:
    name = q.get("name", [None])[0]
    matching = [a for a in fake.artifacts if name is None or a["name"] == name]
    newest_first = sorted(matching, key=lambda a: a["id"], reverse=True)
    page, headers = fake.paginate(
        newest_first, q, f"{fake.prefix}/repos/{fake.full_name}/actions/artifacts"
    )
    return 200, headers, {"total_count": len(matching), "artifacts": page}


def _download(fake: FakeGitHub, m: re.Match[str], q: dict[str, list[str]], b: Any) -> Any:
    artifact_id = int(m.group("id"))
    artifact = next((a for a in fake.artifacts if a["id"] == artifact_id), None)
    if artifact is None:
        return 404, {}, _error("Not Found")
    if artifact["expired"] or artifact_id in fake.gone_archives:
        return 410, {}, _error("Artifact has expired")
    location = f"{fake.blob_base}/blob/{artifact_id}?sig=presigned"
    return 302, {"Location": location}, None


def _run(fake: FakeGitHub, m: re.Match[str], q: dict[str, list[str]], b: Any) -> Any:
    run = fake.runs.get(int(m.group("id")))
    return (200, {}, run) if run else (404, {}, _error("Not Found"))


def _list_comments(fake: FakeGitHub, m: re.Match[str], q: dict[str, list[str]], b: Any) -> Any:
    issue = int(m.group("n"))
    items = fake.comments.get(issue, [])
    page, headers = fake.paginate(
        items, q, f"{fake.prefix}/repos/{fake.full_name}/issues/{issue}/comments"
    )
    return 200, headers, page


def _create_comment(fake: FakeGitHub, m: re.Match[str], q: dict[str, list[str]], b: Any) -> Any:
    comment = fake.add_comment(
        int(m.group("n")), b["body"], login="github-actions[bot]", kind="Bot"
    )
    return 201, {}, comment


def _update_comment(fake: FakeGitHub, m: re.Match[str], q: dict[str, list[str]], b: Any) -> Any:
    comment_id = int(m.group("id"))
    for comments in fake.comments.values():
        for comment in comments:
            if comment["id"] == comment_id:
                comment["body"] = b["body"]
                comment["updated_at"] = "2024-06-01T00:00:00Z"
                return 200, {}, comment
    return 404, {}, _error("Not Found")


def _pull(fake: FakeGitHub, m: re.Match[str], q: dict[str, list[str]], b: Any) -> Any:
    pull = fake.pulls.get(int(m.group("n")))
    return (200, {}, pull) if pull else (404, {}, _error("Not Found"))


def _contents(fake: FakeGitHub, m: re.Match[str], q: dict[str, list[str]], b: Any) -> Any:
    path = m.group("path")
    branch = q.get("ref", [fake.default_branch])[0]
    data = fake.git.file_at(branch, path)
    if data is None:
        return 404, {}, _error("Not Found")
    sha = fake.git.put_blob(data)
    inline = len(data) <= fake.contents_inline_limit
    url = fake.repo_url(f"/contents/{path}?ref={branch}")
    content = {
        "type": "file",
        "encoding": "base64" if inline else "none",
        "size": len(data),
        "name": path.rsplit("/", 1)[-1],
        "path": path,
        "content": base64.b64encode(data).decode() if inline else "",
        "sha": sha,
        "url": url,
        "git_url": fake.repo_url(f"/git/blobs/{sha}"),
        "html_url": None,
        "download_url": None,
        "_links": {"git": fake.repo_url(f"/git/blobs/{sha}"), "html": None, "self": url},
    }
    return 200, {}, content


def _create_blob(fake: FakeGitHub, m: re.Match[str], q: dict[str, list[str]], b: Any) -> Any:
    raw = base64.b64decode(b["content"]) if b.get("encoding") == "base64" else b["content"].encode()
    sha = fake.git.put_blob(raw)
    return (
        201,
        {"Location": fake.repo_url(f"/git/blobs/{sha}")},
        {"sha": sha, "url": fake.repo_url(f"/git/blobs/{sha}")},
    )


def _get_blob(fake: FakeGitHub, m: re.Match[str], q: dict[str, list[str]], b: Any) -> Any:
    sha = m.group("sha")
    data = fake.git.blobs.get(sha)
    if data is None:
        return 404, {}, _error("Not Found")
    return (
        200,
        {},
        {
            "content": base64.b64encode(data).decode(),
            "encoding": "base64",
            "url": fake.repo_url(f"/git/blobs/{sha}"),
            "sha": sha,
            "size": len(data),
            "node_id": f"B_{sha[:8]}",
        },
    )


def _tree_body(fake: FakeGitHub, sha: str) -> dict[str, Any]:
    entries = fake.git.trees[sha]
    return {
        "sha": sha,
        "url": fake.repo_url(f"/git/trees/{sha}"),
        "truncated": False,
        "tree": [
            {
                "path": p,
                "mode": "100644",
                "type": "blob",
                "sha": s,
                "size": len(fake.git.blobs[s]),
                "url": fake.repo_url(f"/git/blobs/{s}"),
            }
            for p, s in sorted(entries.items())
        ],
    }


def _create_tree(fake: FakeGitHub, m: re.Match[str], q: dict[str, list[str]], b: Any) -> Any:
    entries: dict[str, str] = {}
    if b.get("base_tree"):
        base = fake.git.trees.get(b["base_tree"])
        if base is None:
            return 422, {}, _error("base_tree does not exist")
        entries.update(base)
    for item in b["tree"]:
        if item.get("content") is not None:
            entries[item["path"]] = fake.git.put_blob(item["content"].encode())
        elif "sha" in item and item["sha"] is None:
            entries.pop(item["path"], None)  # sha null deletes the path
        elif item.get("sha") in fake.git.blobs:
            entries[item["path"]] = item["sha"]
        else:
            return 422, {}, _error("tree.sha is not a valid blob")
    sha = fake.git.put_tree(entries)
    return 201, {"Location": fake.repo_url(f"/git/trees/{sha}")}, _tree_body(fake, sha)


def _commit_body(fake: FakeGitHub, sha: str) -> dict[str, Any]:
    commit = fake.git.commits[sha]
    body = _SPEC.example("git-commit")
    person = {"date": "2024-05-01T00:00:00Z", "email": "bot@example.invalid", "name": "bot"}
    return deep_update(
        body,
        {
            "sha": sha,
            "node_id": f"C_{sha[:8]}",
            "url": fake.repo_url(f"/git/commits/{sha}"),
            "html_url": f"https://github.invalid/{fake.full_name}/commit/{sha}",
            "author": person,
            "committer": person,
            "message": commit["message"],
            "tree": {"sha": commit["tree"], "url": fake.repo_url(f"/git/trees/{commit['tree']}")},
            "parents": [
                {
                    "sha": p,
                    "url": fake.repo_url(f"/git/commits/{p}"),
                    "html_url": f"https://github.invalid/{fake.full_name}/commit/{p}",
                }
                for p in commit["parents"]
            ],
            "verification": {
                "verified": False,
                "reason": "unsigned",
                "signature": None,
                "payload": None,
                "verified_at": None,
            },
        },
    )


def _create_commit(fake: FakeGitHub, m: re.Match[str], q: dict[str, list[str]], b: Any) -> Any:
    if b["tree"] not in fake.git.trees or any(p not in fake.git.commits for p in b["parents"]):
        return 422, {}, _error("tree or parent does not exist")
    sha = fake.git.put_commit(b["message"], b["tree"], list(b["parents"]))
    return 201, {"Location": fake.repo_url(f"/git/commits/{sha}")}, _commit_body(fake, sha)


def _get_commit(fake: FakeGitHub, m: re.Match[str], q: dict[str, list[str]], b: Any) -> Any:
    sha = m.group("sha")
    if sha not in fake.git.commits:
        return 404, {}, _error("Not Found")
    return 200, {}, _commit_body(fake, sha)


def _ref_body(fake: FakeGitHub, name: str) -> dict[str, Any]:
    sha = fake.git.refs[name]
    return {
        "ref": f"refs/{name}",
        "node_id": f"R_{name}",
        "url": fake.repo_url(f"/git/refs/{name}"),
        "object": {
            "type": "tag" if sha in fake.git.tag_objects else "commit",
            "sha": sha,
            "url": fake.repo_url(
                f"/git/tags/{sha}" if sha in fake.git.tag_objects else f"/git/commits/{sha}"
            ),
        },
    }


def _get_tag(fake: FakeGitHub, m: re.Match[str], q: dict[str, list[str]], b: Any) -> Any:
    sha = m.group("sha")
    tag = fake.git.tag_objects.get(sha)
    if tag is None:
        return 404, {}, _error("Not Found")
    target = tag["object"]
    kind = "tags" if target["type"] == "tag" else "commits"
    body = {
        "node_id": f"T_{sha[:8]}",
        "sha": sha,
        "url": fake.repo_url(f"/git/tags/{sha}"),
        "tag": tag["tag"],
        "message": "release",
        "tagger": {"date": "2024-05-01T00:00:00Z", "email": "t@example.invalid", "name": "t"},
        "object": {**target, "url": fake.repo_url(f"/git/{kind}/{target['sha']}")},
        "verification": {
            "verified": False,
            "reason": "unsigned",
            "signature": None,
            "payload": None,
            "verified_at": None,
        },
    }
    return 200, {}, body


def _get_ref(fake: FakeGitHub, m: re.Match[str], q: dict[str, list[str]], b: Any) -> Any:
    name = m.group("ref")
    if name not in fake.git.refs:
        return 404, {}, _error("Not Found")
    return 200, {}, _ref_body(fake, name)


def _create_ref(fake: FakeGitHub, m: re.Match[str], q: dict[str, list[str]], b: Any) -> Any:
    name = b["ref"].removeprefix("refs/")
    if name in fake.git.refs:
        return 422, {}, _error("Reference already exists")
    if b["sha"] not in fake.git.commits:
        return 422, {}, _error("Object does not exist")
    fake.git.refs[name] = b["sha"]
    return 201, {"Location": fake.repo_url(f"/git/refs/{name}")}, _ref_body(fake, name)


def _update_ref(fake: FakeGitHub, m: re.Match[str], q: dict[str, list[str]], b: Any) -> Any:
    name = m.group("ref")
    current = fake.git.refs.get(name)
    if current is None:
        return 422, {}, _error("Reference does not exist")
    new = b["sha"]
    if not b.get("force") and current not in fake.git.commits[new]["parents"] and new != current:
        return 422, {}, _error("Update is not a fast forward")
    fake.git.refs[name] = new
    return 200, {}, _ref_body(fake, name)


def _compare(fake: FakeGitHub, m: re.Match[str], q: dict[str, list[str]], b: Any) -> Any:
    """``GET /compare/{base}...{head}``: how ``head`` relates to ``base`` in the history."""
    base_name, sep, head_name = m.group("basehead").partition("...")
    git = fake.git
    base, head = git.resolve(base_name), git.resolve(head_name)
    if not sep or base is None or head is None:
        return 404, {}, _error("Not Found")
    head_line, base_line = git.ancestors(head), git.ancestors(base)
    merge_base = next((c for c in head_line if c in base_line), None)
    if merge_base is None:
        return 404, {}, _error(f"No common ancestor between {base_name} and {head_name}.")
    ahead = [c for c in head_line if c not in base_line]
    behind = [c for c in base_line if c not in head_line]
    if not ahead and not behind:
        status = "identical"
    elif not behind:
        status = "ahead"
    elif not ahead:
        status = "behind"
    else:
        status = "diverged"
    per_page = int(q.get("per_page", ["250"])[0])
    page = int(q.get("page", ["1"])[0])
    oldest_first = list(reversed(ahead))
    listed = oldest_first[(page - 1) * per_page : page * per_page]
    url = fake.repo_url(f"/compare/{base_name}...{head_name}")
    html = f"https://github.invalid/{fake.full_name}/compare/{base_name}...{head_name}"
    body = _SPEC.example("commit-comparison")
    deep_update(
        body,
        {
            "url": url,
            "html_url": html,
            "permalink_url": html,
            "diff_url": f"{html}.diff",
            "patch_url": f"{html}.patch",
            "status": status,
            "ahead_by": len(ahead),
            "behind_by": len(behind),
            "total_commits": len(ahead),
            "base_commit": _code_commit(fake, base),
            "merge_base_commit": _code_commit(fake, merge_base),
            "commits": [_code_commit(fake, c) for c in listed],
            "files": [],
        },
    )
    return 200, {}, body


def _code_commit(fake: FakeGitHub, sha: str) -> dict[str, Any]:
    commit = _SPEC.example("commit")
    parents = fake.git.commits[sha]["parents"]
    return deep_update(
        commit,
        {
            "sha": sha,
            "node_id": f"C_{sha[:8]}",
            "url": fake.repo_url(f"/commits/{sha}"),
            "html_url": f"https://github.invalid/{fake.full_name}/commit/{sha}",
            "parents": [{"sha": p, "url": fake.repo_url(f"/commits/{p}")} for p in parents],
        },
    )


_ROUTES: list[tuple[str, str, Route]] = [
    (r"", "GET", _repo),
    (r"/actions/artifacts", "GET", _list_artifacts),
    (r"/actions/artifacts/(?P<id>\d+)/zip", "GET", _download),
    (r"/actions/runs/(?P<id>\d+)", "GET", _run),
    (r"/issues/(?P<n>\d+)/comments", "GET", _list_comments),
    (r"/issues/(?P<n>\d+)/comments", "POST", _create_comment),
    (r"/issues/comments/(?P<id>\d+)", "PATCH", _update_comment),
    (r"/pulls/(?P<n>\d+)", "GET", _pull),
    (r"/contents/(?P<path>.+)", "GET", _contents),
    (r"/git/blobs", "POST", _create_blob),
    (r"/git/blobs/(?P<sha>[0-9a-f]+)", "GET", _get_blob),
    (r"/git/trees", "POST", _create_tree),
    (r"/git/commits", "POST", _create_commit),
    (r"/git/commits/(?P<sha>[0-9a-f]+)", "GET", _get_commit),
    (r"/git/ref/(?P<ref>.+)", "GET", _get_ref),
    (r"/git/tags/(?P<sha>[0-9a-f]+)", "GET", _get_tag),
    (r"/git/refs", "POST", _create_ref),
    (r"/git/refs/(?P<ref>.+)", "PATCH", _update_ref),
    (r"/compare/(?P<basehead>[^/]+)", "GET", _compare),
]


# -- HTTP plumbing ------------------------------------------------------------------------


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Headers and body in one buffered write, no Nagle: otherwise every response waits
    # out the client's delayed ACK (~40 ms), which adds up over hundreds of requests.
    wbufsize = 1 << 16
    disable_nagle_algorithm = True
    fake: FakeGitHub

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _read_body(self) -> bytes:
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def _send(self, status: int, headers: dict[str, str], payload: bytes, ctype: str) -> None:
        self.send_response(status)
        for key, value in headers.items():
            self.send_header(key, value)
        if payload or ctype:
            self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)


class _ApiHandler(_Handler):
    def _dispatch(self) -> None:
        fake = self.fake
        split = urlsplit(self.path)
        path = split.path
        query = parse_qs(split.query, keep_blank_values=True)
        raw = self._read_body()
        body = json.loads(raw) if raw else None
        record = Recorded(self.command, path, query, dict(self.headers.items()), body)
        fake.requests.append(record)

        if not path.startswith(fake.prefix + "/"):
            fake.violations.append(f"{self.command} {path}: outside the API prefix {fake.prefix!r}")
            self._send(404, {}, json.dumps(_error("Not Found")).encode(), "application/json")
            return
        api_path = path[len(fake.prefix) :]
        op = _SPEC.match(self.command, api_path)
        if op is None:
            fake.violations.append(f"{self.command} {api_path}: no such operation in the spec")
        else:
            fake.violations.extend(_SPEC.check_request(op, query, body))

        auth = self.headers.get("Authorization", "")
        if fake.token and auth not in (f"token {fake.token}", f"Bearer {fake.token}"):
            status, headers, out = 401, dict[str, str](), _error("Bad credentials")
        else:
            with fake._lock:
                status, headers, out = fake.handle(self.command, api_path, query, body)
        record.status = status
        if op is not None and status != 401:
            if record.fault and not _SPEC.documents(op, status):
                # An injected failure GitHub does send but does not document for this
                # operation (a 403 for a missing permission): its body must still be
                # GitHub's error shape.
                fake.violations.extend(_SPEC.check_schema("basic-error", out))
            else:
                fake.violations.extend(_SPEC.check_response(op, status, out))
        payload = b"" if out is None else json.dumps(out).encode()
        self._send(status, headers, payload, "application/json; charset=utf-8" if payload else "")

    do_GET = do_POST = do_PATCH = do_PUT = do_DELETE = _dispatch


class _BlobHandler(_Handler):
    def do_GET(self) -> None:
        fake = self.fake
        split = urlsplit(self.path)
        record = Recorded(
            "GET", split.path, parse_qs(split.query), dict(self.headers.items()), None
        )
        fake.blob_requests.append(record)
        m = re.fullmatch(r"/blob/(\d+)", split.path)
        data = fake.archives.get(int(m.group(1))) if m else None
        if data is not None and fake.expired_blob_answers > 0:
            fake.expired_blob_answers -= 1
            record.status = 403
            self._send(403, {}, b"AuthenticationFailed: signature expired", "application/xml")
            return
        if data is None:
            record.status = 404
            self._send(404, {}, b"no such blob", "text/plain")
            return
        record.status = 200
        self._send(200, {}, data, "application/zip")


def _serve(fake: FakeGitHub, handler: type[_Handler], host: str) -> ThreadingHTTPServer:
    bound = type(handler.__name__, (handler,), {"fake": fake})
    server = ThreadingHTTPServer((host, 0), bound)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    return server


# -- fixtures -----------------------------------------------------------------------------


def _fake(prefix: str) -> Iterator[FakeGitHub]:
    fake = FakeGitHub(prefix=prefix)
    fake.start()
    try:
        yield fake
    finally:
        fake.stop()
    assert not fake.violations, "traffic that does not match GitHub's OpenAPI description:\n" + (
        "\n".join(fake.violations)
    )


@pytest.fixture(name="fake_github")
def fake_github_fixture() -> Iterator[FakeGitHub]:
    """The fake GitHub at http://127.0.0.1:PORT (github.com layout)."""
    yield from _fake("")


@pytest.fixture(name="fake_ghes")
def fake_ghes_fixture() -> Iterator[FakeGitHub]:
    """The fake GitHub at http://127.0.0.1:PORT/api/v3 (GitHub Enterprise Server layout)."""
    yield from _fake("/api/v3")


def github_factory_for_tests(api_url: str, token: str) -> Any:
    """The production factory with the write pacing turned off."""
    return default_github_factory(api_url, token, write_delay=0)


__all__ = [
    "FakeGitHub",
    "GitStore",
    "Recorded",
    "deep_update",
    "fake_ghes_fixture",
    "fake_github_fixture",
    "github_factory_for_tests",
    "make_zip",
]

"""A local fake of the few Kubernetes API paths `KubernetesProvider` calls, with a fake kubelet.

Pods: create (validated by the official client's own models), read, list by label selector,
delete, log. The "kubelet" runs each pod's server as a real `mcpgym serve` process on a loopback
address of its own (the pod IP, 127.77.X.N) and the pod's declared port, applies the pod's own
readiness probe (`httpGet` path and port) to set the `Ready` condition, reports a dead process
as phase `Failed`, and removes a deleted pod once its process has exited. An image it does not
know stays waiting with `ErrImagePull`, as a real kubelet reports it.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import json
import random
import subprocess
import sys
import threading
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import httpx
from kubernetes import client as k8s
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def validate(data: Any, model: str) -> Any:
    """Deserialize `data` into the client's `model` (raises ValueError when it does not fit)."""
    return k8s.ApiClient().deserialize(json.dumps(data), model, "application/json")


@dataclass
class FakePod:
    manifest: dict[str, Any]
    ip: str
    uid: str = field(default_factory=lambda: str(uuid.uuid4()))
    created: str = field(default_factory=_now)
    proc: subprocess.Popen[str] | None = None
    ready: bool = False
    waiting: str | None = "ContainerCreating"
    deleting: str | None = None
    reader: threading.Thread | None = None
    lines: collections.deque[str] = field(default_factory=lambda: collections.deque(maxlen=200))

    @property
    def container(self) -> dict[str, Any]:
        return self.manifest["spec"]["containers"][0]

    def phase(self) -> str:
        if self.proc is None:
            return "Pending"
        return "Running" if self.proc.poll() is None else "Failed"

    def to_json(self) -> dict[str, Any]:
        meta = dict(self.manifest["metadata"], uid=self.uid, creationTimestamp=self.created)
        if self.deleting:
            meta["deletionTimestamp"] = self.deleting
        state: dict[str, Any]
        if self.proc is not None and self.proc.poll() is not None:
            reason = "Error" if self.proc.returncode else "Completed"
            state = {"terminated": {"exitCode": self.proc.returncode, "reason": reason}}
        elif self.proc is not None:
            state = {"running": {"startedAt": self.created}}
        else:
            state = {"waiting": {"reason": self.waiting}}
        status: dict[str, Any] = {
            "phase": self.phase(),
            "conditions": [{"type": "Ready", "status": str(self.ready)}],
            "containerStatuses": [
                {"name": self.container["name"], "image": self.container["image"],
                 "imageID": "", "ready": self.ready, "restartCount": 0, "state": state}
            ],
        }  # fmt: skip
        if self.proc is not None:
            status["podIP"] = self.ip
        return {"apiVersion": "v1", "kind": "Pod", "metadata": meta,
                "spec": self.manifest["spec"], "status": status}  # fmt: skip


class FakeCluster:
    """The fake API's state; `images` maps an image name to the env target its pods serve."""

    def __init__(self, images: dict[str, str]) -> None:
        self.images = images
        self.pods: dict[tuple[str, str], FakePod] = {}
        self.created: list[dict[str, Any]] = []
        self.calls: list[str] = []
        self._net = random.randint(1, 254)
        self._next = 2
        self._lock = threading.Lock()

    def _ip(self) -> str:
        with self._lock:
            n, self._next = self._next, self._next + 1
        return f"127.77.{self._net}.{n}"

    # -- the API ---------------------------------------------------------------------------

    async def create(self, request: Request) -> Response:
        ns = request.path_params["ns"]
        self.calls.append("create")
        body = await request.json()
        try:
            validate(body, "V1Pod")
            name = body["metadata"]["name"]
            assert body["spec"]["containers"]
        except (ValueError, KeyError, TypeError, AssertionError) as exc:
            return _status(422, "Invalid", f"invalid Pod: {exc}")
        if (ns, name) in self.pods:
            return _status(409, "AlreadyExists", f'pods "{name}" already exists')
        body["metadata"]["namespace"] = ns
        self.created.append(body)
        pod = self.pods[(ns, name)] = FakePod(body, self._ip())
        return JSONResponse(pod.to_json(), status_code=201)

    async def read(self, request: Request) -> Response:
        self.calls.append("read")
        pod = self.pods.get((request.path_params["ns"], request.path_params["name"]))
        if pod is None:
            return _status(404, "NotFound", f'pods "{request.path_params["name"]}" not found')
        return JSONResponse(pod.to_json())

    async def list(self, request: Request) -> Response:
        self.calls.append("list")
        ns = request.path_params["ns"]
        want = _selector(request.query_params.get("labelSelector", ""))
        items = [
            p.to_json()
            for (pns, _), p in self.pods.items()
            if pns == ns and all(p.manifest["metadata"].get("labels", {}).get(k) == v
                                 for k, v in want.items())
        ]  # fmt: skip
        return JSONResponse({"apiVersion": "v1", "kind": "PodList", "metadata": {}, "items": items})

    async def delete(self, request: Request) -> Response:
        self.calls.append("delete")
        pod = self.pods.get((request.path_params["ns"], request.path_params["name"]))
        if pod is None:
            return _status(404, "NotFound", f'pods "{request.path_params["name"]}" not found')
        pod.deleting = pod.deleting or _now()
        return JSONResponse(pod.to_json())

    async def log(self, request: Request) -> Response:
        pod = self.pods.get((request.path_params["ns"], request.path_params["name"]))
        if pod is None:
            return _status(404, "NotFound", "not found")
        tail = int(request.query_params.get("tailLines", "1000"))
        return PlainTextResponse("\n".join(list(pod.lines)[-tail:]))

    # -- the kubelet -----------------------------------------------------------------------

    async def kubelet(self) -> None:
        async with httpx.AsyncClient(timeout=1.0, trust_env=False) as http:
            while True:
                for key, pod in list(self.pods.items()):
                    await self._tend(key, pod, http)
                await asyncio.sleep(0.1)

    async def _tend(self, key: tuple[str, str], pod: FakePod, http: httpx.AsyncClient) -> None:
        if pod.deleting:
            if pod.proc is not None and pod.proc.poll() is None:
                pod.proc.terminate()
                with contextlib.suppress(subprocess.TimeoutExpired):
                    await asyncio.to_thread(pod.proc.wait, 5)
                if pod.proc.poll() is None:
                    pod.proc.kill()
                    await asyncio.to_thread(pod.proc.wait)
            _close(pod)
            del self.pods[key]
            return
        if pod.proc is None:
            target = self.images.get(pod.container["image"])
            if target is None:
                pod.waiting = "ErrImagePull"
                return
            port = pod.container["ports"][0]["containerPort"]
            cmd = [sys.executable, "-m", "mcpgym.servers", "serve", target,
                   "--host", pod.ip, "--port", str(port)]  # fmt: skip
            pod.proc = await asyncio.to_thread(
                subprocess.Popen, cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT, text=True,
            )  # fmt: skip
            pod.reader = threading.Thread(target=_drain, args=(pod,), daemon=True)
            pod.reader.start()
            return
        if pod.proc.poll() is not None:
            pod.ready = False
            return
        probe = pod.container["readinessProbe"]["httpGet"]
        try:
            resp = await http.get(f"http://{pod.ip}:{probe['port']}{probe['path']}")
            pod.ready = resp.status_code == 200
        except httpx.HTTPError:
            pod.ready = False

    def stop_all(self) -> None:
        for pod in self.pods.values():
            if pod.proc is not None and pod.proc.poll() is None:
                pod.proc.kill()
                pod.proc.wait()
            _close(pod)
        self.pods.clear()

    def app(self) -> Starlette:
        base = "/api/v1/namespaces/{ns}/pods"

        @contextlib.asynccontextmanager
        async def lifespan(app: Starlette) -> Any:
            task = asyncio.create_task(self.kubelet())
            yield
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
            self.stop_all()

        return Starlette(
            routes=[
                Route(base, self.create, methods=["POST"]),
                Route(base, self.list, methods=["GET"]),
                Route(base + "/{name}", self.read, methods=["GET"]),
                Route(base + "/{name}", self.delete, methods=["DELETE"]),
                Route(base + "/{name}/log", self.log, methods=["GET"]),
                Route("/health", lambda _: JSONResponse({"status": "healthy"})),
            ],
            lifespan=lifespan,
        )


def _close(pod: FakePod) -> None:
    if pod.reader is not None:
        pod.reader.join(5)
    if pod.proc is not None and pod.proc.stdout is not None:
        pod.proc.stdout.close()


def _drain(pod: FakePod) -> None:
    assert pod.proc is not None and pod.proc.stdout is not None
    for line in pod.proc.stdout:
        pod.lines.append(line.rstrip("\n"))


def _selector(text: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for part in filter(None, text.split(",")):
        key, _, value = part.partition("=")
        out[key.strip()] = value.strip()
    return out


def _status(code: int, reason: str, message: str) -> JSONResponse:
    body = {"apiVersion": "v1", "kind": "Status", "status": "Failure", "message": message,
            "reason": reason, "code": code}  # fmt: skip
    return JSONResponse(body, status_code=code)

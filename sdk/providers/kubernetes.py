"""`KubernetesProvider`: one hardened Pod per environment server, through the official client.

Each server is a Pod (`k8s_manifests.pod`: the Docker hardening in its security context,
readiness and liveness from `GET /health`, the provider's labels plus `io.mcpgym.server=<pod>`).
`start` creates it and waits until Kubernetes reports the pod Ready — which is the `/health`
readiness probe passing — then hands back `http://<pod IP>:<port>`: reachable from inside the
cluster (run the trainer or `mcpgym eval` in a pod). A pod that cannot pull its image or crashes
fails the start with the reason Kubernetes gives. `stop` deletes the pod and verifies by listing
with its label selector that it is gone. `alive` reads the pod's phase. Pods are never restarted
in place (`restartPolicy: Never`): a dead server is the pool's to replace.

Needs the `kubernetes` package (`pip install 'mcpgym[kubernetes]'`). The client is blocking; its
calls run in worker threads. Configuration: an `api_client` you built, else the in-cluster
service account, else `~/.kube/config` (`context=`).

What was run: the calls this provider makes were tested against a local fake of the Kubernetes
API paths it uses (pods: create, read, list by label, delete, log) that runs each pod's server
as a real process and applies the pod's own readiness probe. No real cluster was available.

Example:
    >>> KubernetesProvider("mcpgym-calendar:latest", namespace="rl").kind
    'kubernetes'
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from mcpgym.providers.base import LABEL_RUN, Provider, ProviderError, ServerHandle

__all__ = ["KubernetesProvider"]

T = TypeVar("T")

_FATAL_WAITING = {
    "ErrImagePull",
    "ImagePullBackOff",
    "InvalidImageName",
    "CreateContainerConfigError",
    "CreateContainerError",
    "CrashLoopBackOff",
}


class KubernetesProvider(Provider):
    """Environment servers as Pods in `namespace`.

    Args:
        image: the environment image (e.g. from `mcpgym build`, pushed where the cluster pulls).
        namespace: where pods go.
        port: the port the server listens on in the pod (the image's `EXPOSE`, 8000).
        args: replaces the image's CMD (e.g. to add `mcpgym serve` flags); `None` keeps it.
        env / cpu_limit / memory_limit / …: see `k8s_manifests.ServerSpec` (`spec_options`).
        api_client: a configured `kubernetes.client.ApiClient`; default from the environment.
        context: the kubeconfig context when loading `~/.kube/config`.
        poll_interval_s: how often the pod's status is read while waiting.
    """

    kind = "kubernetes"

    def __init__(
        self,
        image: str,
        *,
        namespace: str = "default",
        port: int = 8000,
        args: Sequence[str] | None = None,
        name_prefix: str = "mcpgym",
        api_client: Any = None,
        context: str | None = None,
        poll_interval_s: float = 0.25,
        run_id: str | None = None,
        health_deadline_s: float = 120.0,
        **spec_options: Any,
    ) -> None:
        super().__init__(run_id=run_id, health_deadline_s=health_deadline_s)
        self.image = image
        self.namespace = namespace
        self.port = port
        self.args = list(args) if args is not None else None
        self.name_prefix = name_prefix
        self.context = context
        self.poll_interval_s = poll_interval_s
        self.spec_options = spec_options
        self._api_client = api_client
        self._core: Any = None
        self._counter = itertools.count(1)

    def spec(self) -> Any:
        """The `ServerSpec` every pod of this provider is built from."""
        from mcpgym.providers.k8s_manifests import ServerSpec

        return ServerSpec(
            image=self.image,
            name=self.name_prefix,
            namespace=self.namespace,
            port=self.port,
            args=self.args,
            labels=self.labels,
            **self.spec_options,
        )

    def pod_manifest(self, name: str) -> Any:
        """The `V1Pod` this provider creates for server `name`."""
        from mcpgym.providers.k8s_manifests import pod

        return pod(self.spec(), name)

    def _api(self) -> Any:
        if self._core is None:
            try:
                from kubernetes import client, config  # pyright: ignore[reportMissingImports]
            except ImportError as exc:
                raise ProviderError(
                    "KubernetesProvider needs: pip install 'mcpgym[kubernetes]'"
                ) from exc
            api_client = self._api_client
            if api_client is None:
                try:
                    config.load_incluster_config()
                except config.ConfigException:
                    try:
                        config.load_kube_config(context=self.context)
                    except (config.ConfigException, OSError) as exc:
                        raise ProviderError(f"no Kubernetes configuration: {exc}") from exc
                api_client = client.ApiClient()
            self._core = client.CoreV1Api(api_client)
        return self._core

    async def _call(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        from kubernetes.client.exceptions import ApiException  # pyright: ignore[reportMissingImports]
        from urllib3.exceptions import HTTPError  # pyright: ignore[reportMissingImports]

        try:
            return await asyncio.to_thread(fn, *args, **kwargs)
        except ApiException as exc:
            raise ProviderError(f"Kubernetes API: {exc.status} {exc.reason}: {exc.body}") from exc
        except (OSError, HTTPError) as exc:  # refused, reset, retries exhausted
            raise ProviderError(f"cannot reach the Kubernetes API: {exc}") from exc

    async def _start(self) -> ServerHandle:
        api = self._api()
        name = f"{self.name_prefix}-{self.run_id}-{next(self._counter)}"
        await self._call(api.create_namespaced_pod, self.namespace, self.pod_manifest(name))
        try:
            ip = await self._wait_ready(name)
        except BaseException:
            await self._delete(name)
            raise
        return ServerHandle(
            id=name,
            base_url=f"http://{_host(ip)}:{self.port}",
            meta={"pod": name, "namespace": self.namespace, "pod_ip": ip},
        )

    async def _wait_ready(self, name: str) -> str:
        api = self._api()
        loop = asyncio.get_running_loop()
        end = loop.time() + self.health_deadline_s
        last = "Pending"
        while True:
            pod = await self._call(api.read_namespaced_pod, name, self.namespace)
            status = pod.status
            ready = any(c.type == "Ready" and c.status == "True" for c in status.conditions or ())
            if ready and status.pod_ip:
                return str(status.pod_ip)
            if status.phase in ("Failed", "Succeeded"):
                raise ProviderError(f"pod {name} ended ({status.phase}): {_why(status)}")
            waiting = _waiting_reason(status)
            if waiting in _FATAL_WAITING:
                raise ProviderError(f"pod {name} cannot start: {waiting}: {_why(status)}")
            last = waiting or str(status.phase)
            if loop.time() >= end:
                raise ProviderError(
                    f"pod {name} not Ready after {self.health_deadline_s:.0f}s (last: {last})"
                )
            await asyncio.sleep(self.poll_interval_s)

    async def _stop(self, handle: ServerHandle) -> None:
        await self._delete(handle.id)

    async def _delete(self, name: str) -> None:
        from kubernetes.client.exceptions import ApiException  # pyright: ignore[reportMissingImports]
        from urllib3.exceptions import HTTPError  # pyright: ignore[reportMissingImports]

        api = self._api()
        try:
            await asyncio.to_thread(
                api.delete_namespaced_pod, name, self.namespace, grace_period_seconds=2
            )
        except ApiException as exc:
            if exc.status != 404:
                raise ProviderError(f"cannot delete pod {name}: {exc.status} {exc.reason}") from exc
        except (OSError, HTTPError) as exc:
            raise ProviderError(f"cannot reach the Kubernetes API: {exc}") from exc
        # removal verified by listing, never by reading an error text
        from mcpgym.providers.k8s_manifests import LABEL_SERVER

        selector = f"{LABEL_SERVER}={name}"
        loop = asyncio.get_running_loop()
        end = loop.time() + 60.0
        while await self._list(selector):
            if loop.time() >= end:
                raise ProviderError(f"pod {name} still listed 60 s after deletion")
            await asyncio.sleep(self.poll_interval_s)  # the API has no cheap wait-for-gone

    async def _list(self, selector: str) -> list[str]:
        api = self._api()
        pods = await self._call(api.list_namespaced_pod, self.namespace, label_selector=selector)
        return [p.metadata.name for p in pods.items]

    async def run_pods(self) -> list[str]:
        """Names of every pod of this run still listed (for checks and `gc`)."""
        return await self._list(f"{LABEL_RUN}={self.run_id}")

    async def _logs(self, handle: ServerHandle) -> str:
        api = self._api()
        try:
            text = await self._call(
                api.read_namespaced_pod_log, handle.id, self.namespace, tail_lines=200
            )
        except ProviderError:
            return ""
        return str(text)

    async def alive(self, handle: ServerHandle) -> bool | None:
        """`False` once the pod is gone or has ended; `None` if the API cannot be read."""
        from kubernetes.client.exceptions import ApiException  # pyright: ignore[reportMissingImports]
        from urllib3.exceptions import HTTPError  # pyright: ignore[reportMissingImports]

        api = self._api()
        try:
            pod = await asyncio.to_thread(api.read_namespaced_pod, handle.id, self.namespace)
        except ApiException as exc:
            return False if exc.status == 404 else None
        except (OSError, HTTPError):
            return None
        if pod.metadata.deletion_timestamp is not None:
            return False
        return pod.status.phase not in ("Failed", "Succeeded")


def _host(ip: str) -> str:
    return f"[{ip}]" if ":" in ip else ip


def _waiting_reason(status: Any) -> str | None:
    for c in status.container_statuses or ():
        if c.state is not None and c.state.waiting is not None:
            return str(c.state.waiting.reason)
    return None


def _why(status: Any) -> str:
    parts: list[str] = []
    for c in status.container_statuses or ():
        state = c.state
        detail: Mapping[str, Any] | None = None
        if state is not None and state.waiting is not None:
            detail = {"reason": state.waiting.reason, "message": state.waiting.message}
        elif state is not None and state.terminated is not None:
            t = state.terminated
            detail = {"reason": t.reason, "exit_code": t.exit_code, "message": t.message}
        if detail:
            parts.append(", ".join(f"{k}={v}" for k, v in detail.items() if v is not None))
    return "; ".join(parts) or str(status.message or status.reason or "no detail")

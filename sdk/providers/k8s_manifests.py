"""Kubernetes objects for environment servers, built with the official client's models.

`pod` (one server, what `KubernetesProvider` creates), `deployment` + `service` (N replicas
behind one Service, what `mcpgym k8s manifest` prints for operators), all from one `ServerSpec`.
The pod security context carries the same hardening as `DockerProvider`: non-root (uid 10001,
the `mcpgym build` image's user), no privilege escalation, every capability dropped, read-only
root with a memory-backed `/tmp`, the runtime's default seccomp profile, CPU/memory limits, no
service-account token. Readiness and liveness come from `GET /health`.

Needs the `kubernetes` package (`pip install 'mcpgym[kubernetes]'`).

Example:
    >>> spec = ServerSpec(image="mcpgym-calendar:latest", name="cal")  # doctest: +SKIP
    >>> docs = to_dicts([deployment(spec, replicas=3), service(spec)])  # doctest: +SKIP
    >>> docs[0]["spec"]["replicas"]  # doctest: +SKIP
    3
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "LABEL_SERVER",
    "TOKEN_ENV",
    "ServerSpec",
    "deployment",
    "pod",
    "secret",
    "service",
    "to_dicts",
    "to_yaml",
]

LABEL_SERVER = "io.mcpgym.server"
"""The label naming one server (a pod); services select on it or on `app`."""
TOKEN_ENV = "MCPGYM_OPERATOR_TOKEN"
"""Where `mcpgym serve` reads the operator token from; a pod gets it from a Secret's `token`."""


@dataclass(frozen=True)
class ServerSpec:
    """What every server pod runs and how it is confined.

    `args` replaces the image's CMD (Kubernetes semantics), e.g. to add `mcpgym serve` flags;
    `None` keeps the image's own. `token_secret` names a Secret whose `token` key becomes the
    server's operator token (through `$MCPGYM_OPERATOR_TOKEN`, never an argument).
    """

    image: str
    name: str = "mcpgym-env"
    namespace: str = "default"
    port: int = 8000
    args: Sequence[str] | None = None
    env: Mapping[str, str] = field(default_factory=dict[str, str])
    labels: Mapping[str, str] = field(default_factory=dict[str, str])
    cpu_limit: str = "1"
    memory_limit: str = "512Mi"
    cpu_request: str = "250m"
    memory_request: str = "128Mi"
    tmp_size: str = "64Mi"
    user: int = 10001
    image_pull_policy: str = "IfNotPresent"
    token_secret: str | None = None


def _client() -> Any:
    """The client's models module, imported on first use (the extra is optional)."""
    try:
        return importlib.import_module("kubernetes.client")
    except ImportError as exc:
        raise ImportError("Kubernetes support needs: pip install 'mcpgym[kubernetes]'") from exc


def _container(spec: ServerSpec) -> Any:
    k8s = _client()
    probe = k8s.V1HTTPGetAction(path="/health", port=spec.port)
    return k8s.V1Container(
        name="env",
        image=spec.image,
        image_pull_policy=spec.image_pull_policy,
        args=list(spec.args) if spec.args is not None else None,
        ports=[k8s.V1ContainerPort(container_port=spec.port, name="http", protocol="TCP")],
        env=_env(spec),
        readiness_probe=k8s.V1Probe(
            http_get=probe, period_seconds=2, timeout_seconds=2, failure_threshold=3
        ),
        liveness_probe=k8s.V1Probe(
            http_get=probe, period_seconds=10, timeout_seconds=3, failure_threshold=3
        ),
        resources=k8s.V1ResourceRequirements(
            limits={"cpu": spec.cpu_limit, "memory": spec.memory_limit},
            requests={"cpu": spec.cpu_request, "memory": spec.memory_request},
        ),
        security_context=k8s.V1SecurityContext(
            allow_privilege_escalation=False,
            privileged=False,
            read_only_root_filesystem=True,
            run_as_non_root=True,
            run_as_user=spec.user,
            run_as_group=spec.user,
            capabilities=k8s.V1Capabilities(drop=["ALL"]),
        ),
        volume_mounts=[k8s.V1VolumeMount(name="tmp", mount_path="/tmp")],
    )


def _env(spec: ServerSpec) -> list[Any] | None:
    k8s = _client()
    env = [k8s.V1EnvVar(name=k, value=v) for k, v in sorted(spec.env.items())]
    if spec.token_secret is not None:
        ref = k8s.V1SecretKeySelector(name=spec.token_secret, key="token")
        env.append(k8s.V1EnvVar(name=TOKEN_ENV, value_from=k8s.V1EnvVarSource(secret_key_ref=ref)))
    return env or None


def secret(spec: ServerSpec, token: str) -> Any:
    """The Secret `spec.token_secret` holding the operator token under `token`."""
    if spec.token_secret is None:
        raise ValueError("a token Secret needs spec.token_secret (its name)")
    k8s = _client()
    return k8s.V1Secret(
        api_version="v1",
        kind="Secret",
        type="Opaque",
        metadata=k8s.V1ObjectMeta(
            name=spec.token_secret, namespace=spec.namespace, labels=_labels(spec)
        ),
        string_data={"token": token},
    )


def _pod_spec(spec: ServerSpec, restart_policy: str) -> Any:
    k8s = _client()
    return k8s.V1PodSpec(
        containers=[_container(spec)],
        restart_policy=restart_policy,
        automount_service_account_token=False,
        enable_service_links=False,
        termination_grace_period_seconds=5,
        security_context=k8s.V1PodSecurityContext(
            run_as_non_root=True,
            run_as_user=spec.user,
            run_as_group=spec.user,
            fs_group=spec.user,
            seccomp_profile=k8s.V1SeccompProfile(type="RuntimeDefault"),
        ),
        volumes=[
            k8s.V1Volume(
                name="tmp",
                empty_dir=k8s.V1EmptyDirVolumeSource(medium="Memory", size_limit=spec.tmp_size),
            )
        ],
    )


def _labels(spec: ServerSpec, **extra: str) -> dict[str, str]:
    return {"app.kubernetes.io/name": spec.name, **spec.labels, **extra}


def pod(spec: ServerSpec, name: str) -> Any:
    """One server pod named `name` (never restarted in place: a pool replaces dead servers)."""
    k8s = _client()
    return k8s.V1Pod(
        api_version="v1",
        kind="Pod",
        metadata=k8s.V1ObjectMeta(
            name=name, namespace=spec.namespace, labels=_labels(spec, **{LABEL_SERVER: name})
        ),
        spec=_pod_spec(spec, restart_policy="Never"),
    )


def deployment(spec: ServerSpec, replicas: int = 1) -> Any:
    """`replicas` server pods managed by a Deployment (rolling updates, restarts)."""
    k8s = _client()
    selector = {"app.kubernetes.io/name": spec.name}
    return k8s.V1Deployment(
        api_version="apps/v1",
        kind="Deployment",
        metadata=k8s.V1ObjectMeta(name=spec.name, namespace=spec.namespace, labels=_labels(spec)),
        spec=k8s.V1DeploymentSpec(
            replicas=replicas,
            selector=k8s.V1LabelSelector(match_labels=selector),
            strategy=k8s.V1DeploymentStrategy(
                type="RollingUpdate",
                rolling_update=k8s.V1RollingUpdateDeployment(max_unavailable=0, max_surge=1),
            ),
            template=k8s.V1PodTemplateSpec(
                metadata=k8s.V1ObjectMeta(labels=_labels(spec)),
                spec=_pod_spec(spec, restart_policy="Always"),
            ),
        ),
    )


def service(spec: ServerSpec, service_type: str = "ClusterIP") -> Any:
    """A Service in front of the Deployment's pods, port `spec.port`.

    A WebSocket session is one TCP connection, so it stays on the pod the Service picked.
    """
    k8s = _client()
    return k8s.V1Service(
        api_version="v1",
        kind="Service",
        metadata=k8s.V1ObjectMeta(name=spec.name, namespace=spec.namespace, labels=_labels(spec)),
        spec=k8s.V1ServiceSpec(
            type=service_type,
            selector={"app.kubernetes.io/name": spec.name},
            ports=[k8s.V1ServicePort(name="http", port=spec.port, target_port="http")],
        ),
    )


def to_dicts(objects: Sequence[Any]) -> list[dict[str, Any]]:
    """The objects as the JSON the API server receives (camelCase, no empty fields)."""
    api = _client().ApiClient()
    return [api.sanitize_for_serialization(o) for o in objects]


def to_yaml(objects: Sequence[Any]) -> str:
    """A multi-document YAML of the objects, for `kubectl apply -f -`."""
    import yaml  # pyright: ignore[reportMissingModuleSource]  (PyYAML: a kubernetes dependency)

    return yaml.safe_dump_all(to_dicts(objects), sort_keys=False)

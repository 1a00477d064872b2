"""`mcpgym k8s manifest IMAGE`: the Kubernetes YAML for an environment image.

Prints a Deployment of `--replicas` hardened server pods (the same confinement as the Docker
provider: non-root, no privilege escalation, every capability dropped, read-only root with a
memory-backed /tmp, RuntimeDefault seccomp, CPU/memory limits, `/health` readiness and
liveness) and a Service in front of them, for `kubectl apply -f -`. With `--token-secret NAME`
the pods read the operator token from that Secret (key `token`, as `$MCPGYM_OPERATOR_TOKEN`);
adding `--token-file PATH` also prints the Secret, its value read from the file (a token never
travels as an argument). Registered through the `mcpgym.commands` entry point; needs
`pip install 'mcpgym[kubernetes]'` (without it: one line on stderr, exit 2).

Example::

    mcpgym k8s manifest registry.local:5000/mcpgym-calendar:latest --replicas 4 --name calendar
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

__all__ = ["register"]


def register(sub: Any) -> None:
    """Add the `k8s` command (subcommand `manifest`) to the `mcpgym` parser."""
    k8s = sub.add_parser(
        "k8s",
        help="Kubernetes manifests for environment images",
        description="Kubernetes helpers for environment images.",
    )
    verbs = k8s.add_subparsers(dest="k8s_command", metavar="SUBCOMMAND", required=True)
    p = verbs.add_parser(
        "manifest",
        help="print a Deployment + Service for an environment image",
        description="Print the YAML of a Deployment of hardened server pods and a Service in "
        "front of them (pipe it to `kubectl apply -f -`).",
    )
    p.add_argument("image", metavar="IMAGE", help="the environment image (from `mcpgym build`)")
    p.add_argument("--name", default="mcpgym-env", help="Deployment/Service name (mcpgym-env)")
    p.add_argument("--namespace", default="default", help="namespace (default)")
    p.add_argument("--replicas", type=int, default=1, help="server pods (1)")
    p.add_argument("--port", type=int, default=8000, help="the server's port in the pod (8000)")
    p.add_argument(
        "--service-type",
        default="ClusterIP",
        choices=["ClusterIP", "NodePort", "LoadBalancer"],
        help="Service type (ClusterIP)",
    )
    p.add_argument("--cpu", default="1", help="CPU limit per pod (1)")
    p.add_argument("--memory", default="512Mi", help="memory limit per pod (512Mi)")
    p.add_argument(
        "--token-secret",
        default=None,
        metavar="NAME",
        help="a Secret whose key `token` is the operator token (read as $MCPGYM_OPERATOR_TOKEN)",
    )
    p.add_argument(
        "--token-file",
        default=None,
        metavar="PATH",
        help="with --token-secret: also print that Secret, the token read from PATH",
    )
    p.add_argument(
        "--arg",
        action="append",
        default=None,
        metavar="ARG",
        help="container args replacing the image CMD (repeatable, in order)",
    )
    p.set_defaults(func=_manifest)


def _manifest(args: argparse.Namespace) -> int:
    if args.replicas < 0 or not 0 < args.port < 65536:
        print("mcpgym k8s manifest: error: --replicas >= 0 and 0 < --port < 65536", file=sys.stderr)
        return 2
    if args.token_file is not None and args.token_secret is None:
        print("mcpgym k8s manifest: error: --token-file needs --token-secret", file=sys.stderr)
        return 2
    from mcpgym.providers.k8s_manifests import ServerSpec, deployment, secret, service, to_yaml

    try:
        spec = ServerSpec(
            image=args.image,
            name=args.name,
            namespace=args.namespace,
            port=args.port,
            args=args.arg,
            cpu_limit=args.cpu,
            memory_limit=args.memory,
            token_secret=args.token_secret,
        )
        objects = [deployment(spec, args.replicas), service(spec, args.service_type)]
        if args.token_file is not None:
            with open(args.token_file, encoding="utf-8") as fh:
                token = fh.read().strip()
            if not token:
                raise ValueError(f"{args.token_file}: the token file is empty")
            objects.insert(0, secret(spec, token))
        text = to_yaml(objects)
    except ImportError as exc:  # the kubernetes extra is missing: one line, no traceback
        print(f"mcpgym k8s manifest: error: {exc}", file=sys.stderr)
        return 2
    except (ValueError, OSError) as exc:  # the client's models reject a bad value; no file
        print(f"mcpgym k8s manifest: error: {exc}", file=sys.stderr)
        return 2
    sys.stdout.write(text)
    return 0

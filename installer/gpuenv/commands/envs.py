"""`gpuenv envs`: the environments gpuenv installed, and removing one."""

from __future__ import annotations

import json

import click


@click.group("envs", invoke_without_command=True)
@click.option("--json", "as_json", is_flag=True, help="Print the list as JSON.")
@click.pass_context
def envs_command(ctx: click.Context, as_json: bool) -> None:
    """List environments (name, stack, lockfile hash, Python, size); `envs remove NAME` deletes one."""
    if ctx.invoked_subcommand is not None:
        return
    from gpuenv.envs.store import list_environments

    envs = list_environments()
    if as_json:
        click.echo(
            json.dumps(
                [
                    {
                        "name": e.name,
                        "path": str(e.path),
                        "size": e.size,
                        **{
                            k: e.metadata.get(k)
                            for k in (
                                "stack",
                                "python",
                                "lockfile",
                                "lockfile_sha256",
                                "accelerator",
                                "backend",
                            )
                        },
                    }
                    for e in envs
                ],
                indent=2,
            )
        )
        return
    if not envs:
        click.echo("no environments yet: `gpuenv install LOCKFILE --name NAME`")
        return
    for e in envs:
        stack = ", ".join(f"{k} {v}" for k, v in (e.metadata.get("stack") or {}).items())
        click.echo(
            f"{e.name:<16} {stack or '-':<40} py{e.metadata.get('python')}  "
            f"{str(e.metadata.get('lockfile_sha256', ''))[:12]}  {e.size / 1e6:8.1f} MB  {e.path}"
        )


@envs_command.command("remove")
@click.argument("name")
def remove_command(name: str) -> None:
    from gpuenv.envs.store import EnvLocation, remove_environment

    removed = remove_environment(EnvLocation.named(name))
    click.echo(f"removed {name} ({removed})")

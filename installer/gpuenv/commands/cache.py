"""`gpuenv cache`: where gpuenv keeps downloads and derived data, how big it is, emptying it."""

from __future__ import annotations

import click

from gpuenv.commands.json_output import emit_result, json_option


@click.group("cache")
def cache_command() -> None:
    """gpuenv's cache: `dir`, `size`, `clean`. Everything in it can be downloaded or rebuilt again;
    environments live in the store, not here."""


@cache_command.command("dir")
@json_option("Print the folder as JSON.")
def dir_command(as_json: bool) -> None:
    """Print the cache folder (GPUENV_CACHE_DIR overrides it)."""
    from gpuenv.cache import cache_dir

    if as_json:
        emit_result(click.get_current_context(), path=str(cache_dir()))
        return
    click.echo(str(cache_dir()))


@cache_command.command("size")
@json_option("Print the sizes as JSON.")
def size_command(as_json: bool) -> None:
    """The cache's size, per kind of content."""
    from gpuenv.cache import cache_dir, cache_usage

    usage = cache_usage()
    if as_json:
        emit_result(
            click.get_current_context(),
            path=str(cache_dir()),
            bytes=usage,
            total_bytes=sum(usage.values()),
        )
        return
    for kind, size in usage.items():
        click.echo(f"{kind:<20} {size / 1e6:10.1f} MB")
    click.echo(f"{'total':<20} {sum(usage.values()) / 1e6:10.1f} MB  ({cache_dir()})")


@cache_command.command("clean")
@click.option("--dry-run", is_flag=True, help="Say what would be removed; remove nothing.")
@json_option("Print what was (or would be) freed as JSON.")
def clean_command(dry_run: bool, as_json: bool) -> None:
    """Empty the cache. Environments are not touched."""
    from gpuenv.cache import cache_dir, clean_cache

    freed = clean_cache(dry_run=dry_run)
    if as_json:
        context = click.get_current_context()
        emit_result(context, path=str(cache_dir()), dry_run=dry_run, freed_bytes=freed)
        return
    verb = "would free" if dry_run else "freed"
    click.echo(f"{verb} {freed / 1e6:.1f} MB in {cache_dir()}")

"""``ct-referee cluster-certs DIR``: the certificates of a Dask cluster that admits only its own
machines (TLS both ways: the scheduler, the workers and the coordinator each prove themselves
with a certificate signed by the folder's own authority).

Made with the ``openssl`` command (present wherever Python's ``ssl`` is; the ``cryptography``
package, which Dask's ``Security.temporary`` uses, is not one of ct-referee's dependencies).
Keys are ECDSA P-256, certificates valid ``--days`` (default 825)."""

from __future__ import annotations

import os
import secrets
import shutil
import subprocess
import tempfile
from pathlib import Path

import click

from referee.runners.cluster import CA_FILE, CA_KEY_FILE, SCHEDULER_CERT, WORKER_CERT

__all__ = ["cluster_certs", "make_certs"]


class CertError(click.ClickException):
    """A certificate that cannot be made; the message is one line."""


def _openssl(*args: str, cwd: Path) -> None:
    try:
        done = subprocess.run(["openssl", *args], cwd=cwd, capture_output=True, text=True,
                              timeout=60, check=False)
    except FileNotFoundError:
        raise CertError("the openssl command is missing: install it (apt-get install "
                        "openssl)") from None
    if done.returncode != 0:
        why = " ".join((done.stderr or done.stdout).split())[:300]
        raise CertError(f"openssl {args[0]} failed: {why}")


def _write(path: Path, data: str) -> None:
    """``data`` into a new file at ``path`` that only its owner may read."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
    with os.fdopen(fd, "w", encoding="ascii") as file:
        file.write(data)


def _issue(folder: Path, tmp: Path, name: str, days: int) -> None:
    """A certificate and its key in one file, ``folder/name``, signed by the folder's CA for
    both ends of a connection (Dask's TLS: every side is client and server)."""
    ext = tmp / "ext.cnf"
    ext.write_text("basicConstraints=critical,CA:FALSE\n"
                   "keyUsage=critical,digitalSignature,keyEncipherment\n"
                   "extendedKeyUsage=serverAuth,clientAuth\n"
                   "subjectAltName=DNS:ct-referee\n")
    cn = f"ct-referee {Path(name).stem}"
    _openssl("req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
             "-nodes", "-keyout", "key.pem", "-out", "req.csr", "-subj", f"/CN={cn}", cwd=tmp)
    _openssl("x509", "-req", "-in", "req.csr", "-CA", str(folder / CA_FILE), "-CAkey",
             str(folder / CA_KEY_FILE), "-set_serial", f"0x{secrets.token_hex(16)}", "-days",
             str(days), "-sha256", "-extfile", str(ext), "-out", "cert.pem", cwd=tmp)
    _write(folder / name, (tmp / "cert.pem").read_text() + (tmp / "key.pem").read_text())


def make_certs(folder: Path, *, workers: tuple[str, ...] = (), days: int = 825) -> list[Path]:
    """Makes, in ``folder`` (created ``0700``), what is missing of: the authority
    (:data:`CA_FILE`, its key :data:`CA_KEY_FILE`), the scheduler's and coordinator's
    certificate (:data:`SCHEDULER_CERT`) and the workers' (:data:`WORKER_CERT`); and one
    certificate per name of ``workers`` (``worker-<name>.pem``), which must be new. Returns
    the files written.

    :raises CertError: for a name given twice or already issued, or a failing openssl.
    """
    if shutil.which("openssl") is None:
        raise CertError("the openssl command is missing: install it (apt-get install openssl)")
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    names = []
    for worker in workers:
        if not worker or not all(c.isalnum() or c in "-_." for c in worker) \
                or worker.startswith("."):
            raise CertError(f"--worker {worker!r}: a name of letters, digits, '-', '_' and '.'")
        name = f"worker-{worker}.pem"
        if (folder / name).exists() or name in names:
            raise CertError(f"{folder / name} exists already: give another --worker name")
        names.append(name)
    has_ca = (folder / CA_FILE).exists()
    if has_ca != (folder / CA_KEY_FILE).exists():
        missing = CA_KEY_FILE if has_ca else CA_FILE
        raise CertError(f"{folder / missing} is missing (its pair is there): make a new "
                        f"folder, the certificates of this one cannot be issued again")
    base = (SCHEDULER_CERT,) if workers else (SCHEDULER_CERT, WORKER_CERT)
    names = [n for n in base if not (folder / n).exists()] + names
    written = []
    with tempfile.TemporaryDirectory(prefix="ct-certs-") as tmp_name:
        tmp = Path(tmp_name)
        if not has_ca:
            _openssl("req", "-x509", "-new", "-newkey", "ec", "-pkeyopt",
                     "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", "ca-key.pem",
                     "-out", "ca.pem", "-days", str(days), "-sha256", "-subj",
                     "/CN=ct-referee cluster authority", "-addext",
                     "basicConstraints=critical,CA:TRUE", "-addext",
                     "keyUsage=critical,keyCertSign,cRLSign", cwd=tmp)
            _write(folder / CA_KEY_FILE, (tmp / "ca-key.pem").read_text())
            _write(folder / CA_FILE, (tmp / "ca.pem").read_text())
            os.chmod(folder / CA_FILE, 0o644)  # public: every machine checks the others by it
            written += [folder / CA_FILE, folder / CA_KEY_FILE]
        for name in names:
            _issue(folder, tmp, name, days)
            written.append(folder / name)
    return written


@click.command("cluster-certs")
@click.argument("folder", type=click.Path(file_okay=False, path_type=Path))
@click.option("--worker", "workers", multiple=True, metavar="NAME",
              help="Issue a certificate of its own to this worker (worker-NAME.pem), with the "
                   "folder's authority; repeat for more.")
@click.option("--days", type=click.IntRange(min=1), default=825, show_default=True,
              help="How long the certificates are valid.")
def cluster_certs(folder: Path, workers: tuple[str, ...], days: int) -> None:
    """Make the TLS certificates of a Dask cluster that admits only its own machines.

    \b
    Writes into FOLDER what is missing of:
      ca.pem          the authority every machine checks the others by (copy it everywhere)
      ca-key.pem      its key: issues certificates; keep it on this machine only
      scheduler.pem   the scheduler's and the coordinator's certificate and key
      worker.pem      the workers' certificate and key (copy it to the workers only)
    With --worker NAME: worker-NAME.pem instead, one per worker.

    \b
    Then (docs/cluster.md):
      dask scheduler --protocol tls --tls-ca-file FOLDER/ca.pem \\
          --tls-cert FOLDER/scheduler.pem --tls-key FOLDER/scheduler.pem ...
      dask worker tls://HOST:PORT --tls-ca-file FOLDER/ca.pem \\
          --tls-cert FOLDER/worker.pem --tls-key FOLDER/worker.pem ...
      ct-referee tournament CONFIG --scheduler tls://HOST:PORT --tls FOLDER
    """
    written = make_certs(folder, workers=workers, days=days)
    if not written:
        click.echo(f"{folder}: every certificate is there already (nothing written)")
        return
    for path in written:
        click.echo(f"wrote {path}")
    click.echo(f"the coordinator: ct-referee tournament CONFIG --scheduler tls://HOST:PORT "
               f"--tls {folder}")

"""Archivos hostiles (issue 47): lo que el agente de referencia lee de su directorio, acotado antes de usarlo.

Cada clase de entrada, no un ejemplo: un sustituto Unicode suelto en cada texto y en cada clave del
punto de control y del registro, una anidación honda en cada lugar, un número no finito o un contador
fuera de rango. En el mismo proceso, con los cargadores del agente; y con procesos reales, que una
entrada mala es una línea en español, código 1 y nada cambiado (también en el segundo --resume). Más
un ``report.txt`` enlazado al reanudar y cada errno dicho en palabras.
"""

import errno
import hashlib
import json
import os

import pytest

from harness.defenses import bounded, durable
from harness.defenses.durable import read_bytes
from harness.defenses.session import stderr_problems
from harness.errors import DiskError, FileRefused, HarnessError, disk_failure, os_reason
from harness.runs.launcher import load_agent, run_agent_process
from harness.tools import report_copies
from maintainer.paths import REFERENCE_AGENT

LONE = "\ud800"  # un sustituto suelto: se parsea de "\\ud800", pero no se puede escribir en UTF-8
DEEP = 1000  # niveles: con este, json.loads mismo termina en RecursionError


@pytest.fixture(scope="module")
def loaders():
    """El agente de referencia como módulo: sus propios cargadores."""
    return load_agent(REFERENCE_AGENT, "referencia_hostil")


@pytest.fixture(scope="module")
def crashed(tmp_path_factory):
    """Un directorio con la corrida caída en after-save-a:3 (punto A con write_report colgante): sus
    archivos, para armar variantes hostiles."""
    workdir = tmp_path_factory.mktemp("caida")
    assert run_agent_process(workdir, agent=REFERENCE_AGENT, crash_after="after-save-a:3").killed
    return {p.name: p.read_bytes() for p in workdir.iterdir()}


def places(value, path=()):
    """Cada (camino, valor) de ``value``: el camino es la lista de claves o índices desde la raíz."""
    yield path, value
    children = (
        value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    )
    for key, child in children:
        yield from places(child, (*path, key))


def replaced(value, path, new):
    """Una copia de ``value`` con ``new`` en ``path``."""
    copy = json.loads(json.dumps(value))
    if not path:
        return new
    target = copy
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = new
    return copy


def renamed_keys(value):
    """Cada copia de ``value`` con una clave de un objeto cambiada por una con un sustituto suelto."""
    for path, item in places(value):
        if isinstance(item, dict):
            for key in item:
                fixed = {(k + LONE if k == key else k): v for k, v in item.items()}
                yield replaced(value, path, fixed)


def hostile_variants(value):
    """(nombre, bytes) de cada variante hostil de ``value``: en cada texto un sustituto suelto, en cada
    lugar una anidación de DEEP niveles, en cada número un NaN y un 1e999, y cada clave renombrada."""
    for path, item in places(value):
        where = "/".join(map(str, path)) or "raíz"
        if isinstance(item, str):
            yield f"sustituto en {where}", json.dumps(replaced(value, path, item + LONE)).encode()
        if isinstance(item, (int, float)) and not isinstance(item, bool):
            for number in ("NaN", "1e999", "-Infinity"):
                marker = replaced(value, path, "@@número@@")
                yield f"{number} en {where}", json.dumps(marker).replace('"@@número@@"', number).encode()
        deep = json.dumps(replaced(value, path, "@@hondo@@"))
        yield f"hondo en {where}", deep.replace('"@@hondo@@"', "[" * DEEP + "]" * DEEP).encode()
    for i, copy in enumerate(renamed_keys(value)):
        yield f"clave {i} con sustituto", json.dumps(copy).encode()


def variants_of(crashed, name):
    return list(hostile_variants(json.loads(crashed[name])))


@pytest.mark.parametrize(
    ("name", "loader"), [("checkpoint.json", "load_checkpoint"), ("effects.json", "load_effects")]
)
def test_every_hostile_variant_is_refused_by_the_loader_in_spanish(
    loaders, crashed, tmp_path, monkeypatch, name, loader
):
    """Ningún cargador devuelve algo que no se pueda volver a escribir, y ninguno lanza otra cosa que su
    error de una línea (nunca RecursionError, UnicodeEncodeError ni ValueError)."""
    monkeypatch.chdir(tmp_path)
    variants = variants_of(crashed, name)
    assert len(variants) > 20  # cada lugar del archivo, no un ejemplo
    for label, data in variants:
        (tmp_path / name).write_bytes(data)
        with pytest.raises(HarnessError) as refused:
            getattr(loaders, loader)()
        line = str(refused.value)
        assert line.startswith(name) and "\n" not in line, label
        line.encode("utf-8")  # la línea misma se puede mostrar


@pytest.mark.parametrize(
    ("count", "ok"), [(0, True), (bounded.MAX_COUNT, True), (bounded.MAX_COUNT + 1, False), (-1, False)]
)
def test_counters_are_in_range_for_any_json_reader(loaders, crashed, tmp_path, monkeypatch, count, ok):
    monkeypatch.chdir(tmp_path)
    cp = json.loads(crashed["checkpoint.json"])
    (tmp_path / "checkpoint.json").write_text(json.dumps({**cp, "tokensUsed": count}), encoding="utf-8")
    if ok:
        assert loaders.load_checkpoint()["tokensUsed"] == count
    else:
        with pytest.raises(HarnessError, match="tokensUsed"):
            loaders.load_checkpoint()


def test_a_json_list_as_the_ledger_says_it_is_not_an_object(loaders, tmp_path, monkeypatch):
    """Una lista es JSON válido: el error dice qué le pasa, no «No se pudo parsear»."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "effects.json").write_text('[{"name": "read_notes"}]', encoding="utf-8")
    with pytest.raises(HarnessError) as refused:
        loaders.load_effects()
    assert "No se pudo parsear" not in str(refused.value) and "debe ser un objeto" in str(refused.value)


def test_a_file_bigger_than_the_bound_is_refused_without_reading_it_all(tmp_path):
    path = tmp_path / "grande.json"
    path.write_bytes(b" " * 101)
    assert read_bytes(path, limit=101) == b" " * 101
    with pytest.raises(OSError) as refused:
        read_bytes(path, limit=100)
    assert refused.value.errno == errno.EFBIG and "pesa más de" in os_reason(refused.value)


# —— con procesos reales: una línea, código 1, nada cambiado, y lo mismo en el segundo --resume ——


def snapshot(workdir):
    return {
        p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(workdir.iterdir()) if p.is_file()
    }


def nested(depth):
    return "[" * depth + "]" * depth


HOSTILE_FILES = {
    "sustituto en checkpoint.json": (
        "checkpoint.json",
        lambda cp: cp.replace(b'"role": "user"', b'"role": "user\\ud800"', 1),
    ),
    "sustituto en effects.json": (
        "effects.json",
        lambda e: e.replace(b'"result": "', b'"result": "\\udfff', 1),
    ),
    "checkpoint.json hondo": (
        "checkpoint.json",
        lambda cp: cp[: cp.rindex(b"}")] + f', "x": {nested(DEEP)}}}'.encode(),
    ),
    "effects.json hondo": ("effects.json", lambda e: f'{{"toolu_09": {nested(DEEP)}}}'.encode()),
    "effects.json es una lista": ("effects.json", lambda e: b"[]"),
    "checkpoint.json con NaN": ("checkpoint.json", lambda cp: cp.replace(b'"turns": 3', b'"turns": NaN', 1)),
}


@pytest.mark.parametrize("case", sorted(HOSTILE_FILES))
def test_a_hostile_file_is_one_line_exit_1_and_nothing_changes(crashed, tmp_path, case):
    name, spoil = HOSTILE_FILES[case]
    for file, data in crashed.items():
        (tmp_path / file).write_bytes(spoil(data) if file == name else data)
    assert (tmp_path / name).read_bytes() != crashed[name], "el caso no cambió el archivo"
    before = snapshot(tmp_path)
    for _ in range(2):  # el segundo --resume dice lo mismo: nada quedó a medias
        done = run_agent_process(tmp_path, agent=REFERENCE_AGENT, resume=True)
        assert done.returncode == 1 and done.stderr.count("\n") == 1, done.stderr
        assert stderr_problems(done.stderr) == [] and done.stderr.startswith(name), done.stderr
        assert snapshot(tmp_path) == before


@pytest.mark.parametrize("link", ["duro", "simbólico"])
@pytest.mark.parametrize("other", ["checkpoint.json", "sales-notes.txt", "effects.json"])
def test_a_linked_report_is_refused_before_the_first_write_on_resume(tmp_path, link, other):
    assert run_agent_process(tmp_path, agent=REFERENCE_AGENT, crash_after="after-save-a:3").killed
    if link == "duro":
        os.link(tmp_path / other, tmp_path / "report.txt")
    else:
        (tmp_path / "report.txt").symlink_to(other)
    before = snapshot(tmp_path)
    done = run_agent_process(tmp_path, agent=REFERENCE_AGENT, resume=True)
    assert done.returncode == 1 and stderr_problems(done.stderr) == [], done.stderr
    assert done.stderr.startswith("report.txt ") and f"enlace {link}" in done.stderr
    assert "[done]" not in done.stdout and snapshot(tmp_path) == before
    os.remove(tmp_path / "report.txt")  # resuelto: --resume termina con un reporte
    assert run_agent_process(tmp_path, agent=REFERENCE_AGENT, resume=True).returncode == 0
    assert report_copies(tmp_path / "report.txt") == 1


def test_a_fresh_run_removes_a_hard_linked_report_without_touching_the_other_name(tmp_path):
    """Una corrida nueva borra el nombre report.txt (el otro archivo queda igual) y escribe el suyo."""
    (tmp_path / "otro.txt").write_text("ajeno\n", encoding="utf-8")
    os.link(tmp_path / "otro.txt", tmp_path / "report.txt")
    assert run_agent_process(tmp_path, agent=REFERENCE_AGENT).returncode == 0
    assert (tmp_path / "otro.txt").read_text(encoding="utf-8") == "ajeno\n"
    assert report_copies(tmp_path / "report.txt") == 1


# —— cada errno en palabras ——

NAMED_IN_THE_ISSUE = (
    "EINTR EINVAL EROFS EMFILE ENFILE ENAMETOOLONG ENOSPC EDQUOT EIO EACCES EPERM EBUSY ETXTBSY EXDEV EAGAIN"
)


@pytest.mark.parametrize("code", sorted(errno.errorcode))
def test_every_errno_is_said_in_words_never_as_a_number(code):
    reason = os_reason(OSError(code, "English text"))
    assert str(code) not in reason and "número" not in reason and "English" not in reason


@pytest.mark.parametrize("name", NAMED_IN_THE_ISSUE.split())
def test_the_errnos_of_file_operations_have_their_own_meaning(name):
    code = getattr(errno, name)
    reason = os_reason(OSError(code, "x"))
    assert name not in reason and "no traduce" not in reason  # una traducción, no el nombre del errno
    assert reason != "no es un archivo común"


def test_a_meaning_is_the_errnos_and_the_agents_refusals_say_their_own():
    """EINVAL (de un fsync) dice lo que significa; «no es un archivo común» es solo el rechazo del agente."""
    fsync = DiskError(OSError(errno.EINVAL, "Invalid argument"), "escribir en", "quedó", "checkpoint.json")
    assert "argumento inválido" in disk_failure(fsync) and "archivo común" not in disk_failure(fsync)
    refused = DiskError(FileRefused(errno.EINVAL, "no es un archivo común", "x"), "leer", "nada cambió")
    assert "no es un archivo común" in disk_failure(refused)
    loop = OSError(errno.ELOOP, "Too many levels of symbolic links")
    assert "enlace" in os_reason(loop) and "no sigue" not in os_reason(loop)


def test_a_fifo_and_a_symlink_are_refused_with_the_agents_own_words(tmp_path):
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "enlace").symlink_to(tmp_path / "fifo")
    for name, words in (("fifo", "no es un archivo común"), ("enlace", "enlace simbólico")):
        with pytest.raises(OSError) as refused:
            read_bytes(tmp_path / name)
        assert words in os_reason(refused.value)


def test_nothing_is_written_that_the_loader_would_refuse_for_its_size(tmp_path, monkeypatch):
    # La cota se baja para no escribir 32 MB: la escritura la consulta en cada llamada.
    monkeypatch.setattr(durable, "MAX_FILE_BYTES", 100)
    path = tmp_path / "checkpoint.json"
    path.write_bytes(b'{"version": 1}')
    with pytest.raises(DiskError) as refused:
        durable.write_durable(str(path), b"x" * 101)
    assert path.read_bytes() == b'{"version": 1}', "el archivo anterior quedó como estaba"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["checkpoint.json"], "ningún temporal"
    line = disk_failure(refused.value)
    assert "\n" not in line and "vuelve a leer" in line
    durable.write_durable(str(path), b"x" * 100)  # en la cota, se escribe
    assert path.read_bytes() == b"x" * 100


@pytest.mark.parametrize("label", ["after-save-a:1", "after-tool:1", "after-save-a:2"])
def test_a_read_only_rerun_that_fails_reaches_the_model_as_is_error(tmp_path, label):
    # Al reanudar, reconcile vuelve a ejecutar la herramienta de solo lectura colgante: si falla (aquí,
    # las notas borradas mientras el agente estaba caído), el modelo recibe is_error como en una
    # corrida normal, y no una línea que se repite en cada --resume.
    assert run_agent_process(tmp_path, agent=REFERENCE_AGENT, crash_after=label).killed
    (tmp_path / "sales-notes.txt").unlink()
    resumed = run_agent_process(tmp_path, agent=REFERENCE_AGENT, resume=True)
    assert "volviendo a ejecutar" in resumed.stdout
    cp = json.loads((tmp_path / "checkpoint.json").read_text(encoding="utf-8"))
    pending_id = f"toolu_{int(label.rsplit(':', 1)[1]):02d}"
    refilled = [
        block
        for message in cp["messages"]
        if isinstance(message["content"], list)
        for block in message["content"]
        if block.get("type") == "tool_result" and block["tool_use_id"] == pending_id
    ]
    assert refilled and refilled[0]["is_error"] is True, refilled
    assert "sales-notes.txt" in refilled[0]["content"]
    assert stderr_problems(resumed.stderr) == []

"""A small Language Server Protocol client: drives ``torchlint server`` as an editor does.

It starts the real server as a subprocess and speaks JSON-RPC over its
stdin and stdout with LSP's ``Content-Length`` framing. A reader thread
queues everything the server sends; requests wait for their answer, and
notifications (``textDocument/publishDiagnostics``, ``window/logMessage``)
and the server's own requests (``workspace/applyEdit``) are kept in order
for the test to look at. Used by tests/test_server.py and
bench/server_latency.py.
"""

from __future__ import annotations

import io
import json
import os
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional

DEFAULT_TIMEOUT = 60.0


class ServerGone(Exception):
    pass


class LspClient:
    def __init__(self, cwd: Optional[str] = None, command: Optional[List[str]] = None,
                 apply_edit: Optional[Callable[[Dict[str, Any]], bool]] = None,
                 env: Optional[Dict[str, str]] = None) -> None:
        command = command or [sys.executable, "-m", "torchlint", "server"]
        self.process = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=cwd, env=env)
        self._next_id = 0
        self._responses: Dict[int, "queue.Queue[Dict[str, Any]]"] = {}
        self._lock = threading.Lock()
        self.notifications: "queue.Queue[Dict[str, Any]]" = queue.Queue()
        self.log: List[Dict[str, Any]] = []  # window/logMessage and showMessage params
        self.applied_edits: List[Dict[str, Any]] = []
        self.server_requests: List[Dict[str, Any]] = []  # every request the server made (registerCapability...)
        # What the "editor" answers to workspace/applyEdit: applied or not.
        self.apply_edit = apply_edit or (lambda edit: True)
        self.stderr_lines: List[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self._stderr_reader = threading.Thread(target=self._read_stderr, daemon=True)
        self._stderr_reader.start()

    # -- wire --------------------------------------------------------------

    def _send(self, message: Dict[str, Any]) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode("utf-8")
        assert self.process.stdin is not None
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.process.stdin.flush()

    def _read(self) -> None:
        stream = self.process.stdout
        assert stream is not None
        while True:
            length = None
            while True:
                header = stream.readline()
                if not header:  # the server exited: wake every waiter
                    self.notifications.put({"method": "$/gone"})
                    with self._lock:
                        waiting = list(self._responses.values())
                    for queue_ in waiting:
                        queue_.put({"error": "the server exited: " + "".join(self.stderr_lines[-20:])})
                    return
                header = header.strip()
                if not header:
                    break
                name, _, value = header.decode("ascii").partition(":")
                if name.lower() == "content-length":
                    length = int(value)
            if length is None:
                continue
            message = json.loads(stream.read(length).decode("utf-8"))
            self._dispatch(message)

    def _read_stderr(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self.stderr_lines.append(line.decode("utf-8", "replace"))

    def _dispatch(self, message: Dict[str, Any]) -> None:
        if "method" not in message:  # a response
            with self._lock:
                waiting = self._responses.get(message.get("id"))
            if waiting is not None:
                waiting.put(message)
            return
        if "id" in message:  # a request from the server
            self._answer(message)
            return
        if message["method"] in ("window/logMessage", "window/showMessage"):
            self.log.append(message["params"])
        self.notifications.put(message)

    def _answer(self, message: Dict[str, Any]) -> None:
        method = message["method"]
        self.server_requests.append(message)
        if method == "workspace/applyEdit":
            self.applied_edits.append(message["params"])
            result: Any = {"applied": bool(self.apply_edit(message["params"]["edit"]))}
        else:  # client/registerCapability, window/workDoneProgress/create, ...
            result = None
        self._send({"id": message["id"], "result": result})

    # -- protocol ------------------------------------------------------------

    def request(self, method: str, params: Any, timeout: float = DEFAULT_TIMEOUT) -> Any:
        with self._lock:
            self._next_id += 1
            ident = self._next_id
            self._responses[ident] = queue.Queue()
        self._send({"id": ident, "method": method, "params": params})
        try:
            response = self._responses[ident].get(timeout=timeout)
        except queue.Empty:
            raise TimeoutError(f"no answer to {method} in {timeout} s") from None
        finally:
            with self._lock:
                del self._responses[ident]
        if "error" in response:
            raise RuntimeError(f"{method}: {response['error']}")
        return response.get("result")

    def notify(self, method: str, params: Any) -> None:
        self._send({"method": method, "params": params})

    def initialize(self, root: Path, initialization_options: Optional[Dict[str, Any]] = None,
                   document_changes: bool = True, resolve_edits: bool = False,
                   watch_files: bool = False, pull_diagnostics: bool = False) -> Dict[str, Any]:
        """``watch_files``: the editor registers file watchers the server asks for;
        ``pull_diagnostics``: it asks for diagnostics (``textDocument/diagnostic``)."""
        code_action: Dict[str, Any] = {"codeActionLiteralSupport": {
            "codeActionKind": {"valueSet": ["quickfix", "source", "source.fixAll"]}}}
        if resolve_edits:
            code_action["resolveSupport"] = {"properties": ["edit"]}
            code_action["dataSupport"] = True
        capabilities = {
            "workspace": {"applyEdit": True, "workspaceEdit": {"documentChanges": document_changes}},
            "textDocument": {
                "publishDiagnostics": {"versionSupport": True},
                "codeAction": code_action,
            },
            "general": {"positionEncodings": ["utf-16"]},
            "notebookDocument": {"synchronization": {"dynamicRegistration": False}},
        }
        if watch_files:
            capabilities["workspace"]["didChangeWatchedFiles"] = {"dynamicRegistration": True}
        if pull_diagnostics:
            capabilities["textDocument"]["diagnostic"] = {"dynamicRegistration": False}
            capabilities["workspace"]["diagnostics"] = {"refreshSupport": True}
        result = self.request("initialize", {
            "processId": os.getpid(), "rootUri": root.as_uri(), "capabilities": capabilities,
            "initializationOptions": initialization_options or {},
            "workspaceFolders": [{"uri": root.as_uri(), "name": root.name}],
        })
        self.notify("initialized", {})
        return result

    def open(self, path: Path, text: str, version: int = 1) -> str:
        uri = path.as_uri()
        self.notify("textDocument/didOpen", {"textDocument": {
            "uri": uri, "languageId": "python", "version": version, "text": text}})
        return uri

    def change(self, uri: str, version: int, text: str) -> None:
        """Replace the whole buffer (a full-text change event)."""
        self.notify("textDocument/didChange", {
            "textDocument": {"uri": uri, "version": version}, "contentChanges": [{"text": text}]})

    def change_range(self, uri: str, version: int, start: tuple, end: tuple, text: str) -> None:
        """An incremental change: replace (line, character)..(line, character) with ``text``."""
        self.notify("textDocument/didChange", {
            "textDocument": {"uri": uri, "version": version},
            "contentChanges": [{"range": {"start": {"line": start[0], "character": start[1]},
                                          "end": {"line": end[0], "character": end[1]}},
                                "text": text}]})

    def diagnostics(self, uri: str, version: Optional[int] = None,
                    timeout: float = DEFAULT_TIMEOUT) -> Dict[str, Any]:
        """The next publishDiagnostics for ``uri`` (of ``version``, if given); earlier ones are skipped."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"no diagnostics for {uri} (version {version})")
            try:
                message = self.notifications.get(timeout=left)
            except queue.Empty:
                continue
            if message["method"] == "$/gone":
                raise ServerGone("".join(self.stderr_lines[-40:]))
            if message["method"] != "textDocument/publishDiagnostics":
                continue
            params = message["params"]
            if params["uri"] == uri and (version is None or params.get("version") == version):
                return params

    def pending_diagnostics(self, wait: float) -> List[Dict[str, Any]]:
        """Every publishDiagnostics that arrives within ``wait`` seconds."""
        found = []
        deadline = time.monotonic() + wait
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return found
            try:
                message = self.notifications.get(timeout=left)
            except queue.Empty:
                return found
            if message["method"] == "textDocument/publishDiagnostics":
                found.append(message["params"])

    def code_actions(self, uri: str, start_line: int, end_line: int,
                     only: Optional[List[str]] = None) -> List[Dict[str, Any]]:
        context: Dict[str, Any] = {"diagnostics": []}
        if only is not None:
            context["only"] = only
        return self.request("textDocument/codeAction", {
            "textDocument": {"uri": uri},
            "range": {"start": {"line": start_line, "character": 0}, "end": {"line": end_line, "character": 0}},
            "context": context,
        }) or []

    def hover(self, uri: str, line: int, character: int) -> Optional[Dict[str, Any]]:
        position = {"line": line, "character": character}
        return self.request("textDocument/hover", {"textDocument": {"uri": uri}, "position": position})

    def pull(self, uri: str, previous_result_id: Optional[str] = None) -> Dict[str, Any]:
        params: Dict[str, Any] = {"textDocument": {"uri": uri}}
        if previous_result_id is not None:
            params["previousResultId"] = previous_result_id
        return self.request("textDocument/diagnostic", params)

    def execute(self, command: str, *arguments: Any) -> Any:
        return self.request("workspace/executeCommand", {"command": command, "arguments": list(arguments)})

    def configure(self, settings: Any) -> None:
        self.notify("workspace/didChangeConfiguration", {"settings": settings})

    def files_changed(self, *changes: tuple) -> None:
        """``workspace/didChangeWatchedFiles``: (path, kind) with kind 1 created, 2 changed, 3 deleted."""
        self.notify("workspace/didChangeWatchedFiles",
                    {"changes": [{"uri": Path(path).as_uri(), "type": kind} for path, kind in changes]})

    def open_notebook(self, path: Path, cells: List[tuple], version: int = 1) -> List[str]:
        """Open a notebook of (kind, text) cells, kind "code" or "markdown"; the cells' uris."""
        uri = path.as_uri()
        cell_uris = [f"vscode-notebook-cell:{path}#cell{n}" for n in range(len(cells))]
        self.notify("notebookDocument/didOpen", {
            "notebookDocument": {"uri": uri, "notebookType": "jupyter-notebook", "version": version,
                                 "cells": [{"kind": 2 if kind == "code" else 1, "document": cell_uri}
                                           for (kind, _), cell_uri in zip(cells, cell_uris)]},
            "cellTextDocuments": [{"uri": cell_uri, "languageId": "python" if kind == "code" else "markdown",
                                   "version": version, "text": text}
                                  for (kind, text), cell_uri in zip(cells, cell_uris)]})
        return cell_uris

    def change_cell(self, notebook: Path, version: int, cell_uri: str, text: str) -> None:
        """Replace the text of one cell of an open notebook."""
        self.notify("notebookDocument/didChange", {
            "notebookDocument": {"uri": notebook.as_uri(), "version": version},
            "change": {"cells": {"textContent": [{"document": {"uri": cell_uri, "version": version},
                                                   "changes": [{"text": text}]}]}}})

    def shutdown(self, timeout: float = 30.0) -> int:
        """shutdown, exit, and the server's exit status."""
        try:
            self.request("shutdown", None, timeout=timeout)
            self.notify("exit", None)
            return self.process.wait(timeout=timeout)
        finally:
            self.close()

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        for stream in (self.process.stdin, self.process.stdout, self.process.stderr):
            try:
                stream.close()
            except Exception:
                pass


def apply_text_edits(text: str, edits: List[Dict[str, Any]]) -> str:
    """``text`` with LSP text edits applied, as an editor applies them (UTF-16 columns)."""
    def lsp_lines(value: str) -> List[str]:  # broken at \n, \r\n and \r only, as LSP counts lines
        return io.StringIO(value, newline="").readlines()

    lines = lsp_lines(text)

    def offset(position: Dict[str, int]) -> int:
        line, character = position["line"], position["character"]
        if line >= len(lines):
            return len(text)
        before = sum(len(earlier) for earlier in lines[:line])
        units = lines[line].encode("utf-16-le")[: 2 * character].decode("utf-16-le")
        return before + len(units)

    # LSP: edits never overlap and all refer to the original text.
    for edit in sorted(edits, key=lambda e: (e["range"]["start"]["line"], e["range"]["start"]["character"]),
                       reverse=True):
        start, end = offset(edit["range"]["start"]), offset(edit["range"]["end"])
        text = text[:start] + edit["newText"] + text[end:]
        lines = lsp_lines(text)
    return text


def workspace_edits(edit: Dict[str, Any], uri: str) -> List[Dict[str, Any]]:
    """The text edits a WorkspaceEdit makes to ``uri`` (documentChanges or changes)."""
    if edit.get("documentChanges"):
        return [e for change in edit["documentChanges"] if change["textDocument"]["uri"] == uri
                for e in change["edits"]]
    return list((edit.get("changes") or {}).get(uri, []))

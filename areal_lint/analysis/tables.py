# SPDX-License-Identifier: Apache-2.0
"""The names ARL1xx knows: blocking calls, synchronous file, HTTP, LLM and agent APIs, and the
methods of thread and process primitives that wait. A false positive or a missed API is most
often one line here; the rules in ``rules/blocking.py`` only say how a call is matched.
"""

from __future__ import annotations

OPEN_CALLS = {"builtins.open", "io.open", "io.open_code", "os.fdopen", "codecs.open"}
# Not SpooledTemporaryFile: it stays in memory up to its max_size, which is why it is chosen.
TEMPFILE = {"tempfile.TemporaryFile", "tempfile.NamedTemporaryFile"}
# os.path calls that stat the disk (on the network filesystems of RL clusters they block for
# long); pure path arithmetic (join, basename, splitext, normpath...) is not here.
OS_PATH_STAT = {
    "exists", "lexists", "isfile", "isdir", "islink", "ismount", "isjunction", "realpath",
    "samefile", "sameopenfile", "getsize", "getmtime", "getatime", "getctime", "relpath",
    "_joinrealpath",
}  # fmt: skip
FS_CALLS = {
    "os.makedirs", "os.mkdir", "os.remove", "os.unlink", "os.rename", "os.renames", "os.replace",
    "os.listdir", "os.scandir", "os.stat", "os.lstat", "os.walk", "os.fwalk", "os.rmdir",
    "os.removedirs", "os.access", "os.chmod", "os.chown", "os.link", "os.symlink", "os.readlink",
    "os.truncate", "os.utime", "os.statvfs", "os.mkfifo", "shutil.copy", "shutil.copy2",
    "shutil.copyfile", "shutil.copymode", "shutil.copystat", "shutil.copytree", "shutil.rmtree",
    "shutil.move", "shutil.disk_usage", "shutil.chown", "shutil.make_archive",
    "shutil.unpack_archive", "shutil.which", "glob.glob", "glob.iglob",
    *(f"os.path.{name}" for name in OS_PATH_STAT),
}  # fmt: skip
PATH_METHODS = {
    "read_text", "read_bytes", "write_text", "write_bytes", "open", "touch", "mkdir", "exists",
    "unlink", "glob", "rglob", "iterdir", "is_file", "is_dir", "stat", "rmdir", "lstat",
    "is_symlink", "is_mount", "resolve", "samefile", "chmod", "rename", "replace", "symlink_to",
    "hardlink_to", "readlink", "owner", "group", "walk",
}  # fmt: skip
PATH_TYPES = {"pathlib.Path", "Path", "pathlib.PosixPath", "pathlib.WindowsPath"}
# Synchronous file objects: an annotation (``f: TextIO``), or a file opened somewhere else (a
# file opened in this body is reported once, at its ``open``).
OPENERS = OPEN_CALLS | TEMPFILE
FILE_TYPES = {
    "typing.TextIO", "typing.BinaryIO", "typing.IO", "io.TextIOWrapper", "io.BufferedReader",
    "io.BufferedWriter", "io.BufferedRandom", "io.FileIO", "io.IOBase", "io.RawIOBase",
    "io.BufferedIOBase", "io.TextIOBase", "typing_extensions.TextIO", "typing_extensions.BinaryIO",
}  # fmt: skip
# Any other method on a synchronous file is a system call (or may be one, through the buffer).
FILE_NO_IO = {"fileno", "isatty", "readable", "writable", "seekable", "tell", "__enter__"}
SQLITE_TYPES = {"sqlite3.connect", "sqlite3.Connection", "sqlite3.Cursor"}
SQLITE_METHODS = {"execute", "executemany", "executescript", "commit", "rollback", "fetchone",
                  "fetchall", "fetchmany", "backup", "close", "iterdump"}  # fmt: skip
TERMINAL_INPUT = {"builtins.input", "getpass.getpass", "sys.stdin.read", "sys.stdin.readline",
                  "sys.stdin.readlines", "sys.stdin.buffer.read", "sys.stdin.buffer.readline"}  # fmt: skip
SERIALIZE = {"torch.load", "torch.save", "pickle.load", "pickle.dump", "numpy.load", "numpy.save",
             "np.load", "np.save", "json.load", "json.dump", "yaml.safe_load", "yaml.load"}  # fmt: skip
SUBPROCESS = {"os.system", "os.popen", "os.wait", "os.waitpid", "os.wait3", "os.wait4", "os.waitid",
              "os.posix_spawn", "os.posix_spawnp", "pty.spawn",
              "subprocess.run", "subprocess.call", "subprocess.check_call", "subprocess.Popen",
              "subprocess.check_output", "subprocess.getoutput", "subprocess.getstatusoutput"}  # fmt: skip
HTTP_FUNCS = {"urllib.request.urlopen", "urllib3.request", "urllib3.PoolManager.request"}
HTTP_MODULES = ("requests", "httpx", "httpx2")  # their module-level verbs are synchronous
HTTP_VERBS = {"get", "post", "put", "patch", "delete", "head", "options", "request", "stream"}
SYNC_CLIENTS = {"requests.Session", "requests.sessions.Session", "requests.session",
                "httpx.Client", "httpx2.Client", "httpx.HTTPTransport",
                "urllib3.PoolManager", "urllib3.ProxyManager", "urllib3.HTTPConnectionPool",
                "urllib3.HTTPSConnectionPool", "urllib3.connection_from_url",
                "urllib3.proxy_from_url", "urllib3.connectionpool.ConnectionPool",
                "urllib3.connectionpool.HTTPConnectionPool",
                "urllib3.connectionpool.HTTPSConnectionPool",
                "urllib3.connectionpool.connection_from_url", "urllib3.poolmanager.PoolManager",
                "urllib3.poolmanager.ProxyManager", "urllib3.request.RequestMethods",
                "urllib3._request_methods.RequestMethods", "http.client.HTTPConnection",
                "http.client.HTTPSConnection"}  # fmt: skip
# Methods of those that only build or configure, without a round trip.
CLIENT_NO_IO = {"build_request", "prepare_request", "mount", "get_adapter",
                "merge_environment_settings", "set_debuglevel", "set_tunnel",
                "__enter__"}  # fmt: skip
SOCKET_WAITS = ({"connect", "accept", "recv", "recv_into", "recvfrom", "recvfrom_into", "recvmsg",
                 "send", "sendall", "sendto", "sendmsg", "sendfile"},
                "use asyncio.open_connection, or await loop.sock_recv/sock_sendall/sock_connect")  # fmt: skip
# A listening socket: accepting waits on a client; the fix is a server of asyncio's.
SERVER_SOCKET_WAITS = (SOCKET_WAITS[0],
                       "use asyncio.start_server, or await loop.sock_accept/sock_recv/sock_sendall")  # fmt: skip
# Synchronous LLM SDK clients and what to use instead.
SYNC_LLM = {
    "openai.OpenAI": "openai.AsyncOpenAI",
    "openai.Client": "openai.AsyncOpenAI",
    "openai.AzureOpenAI": "openai.AsyncAzureOpenAI",
    "anthropic.Anthropic": "anthropic.AsyncAnthropic",
    "anthropic.Client": "anthropic.AsyncAnthropic",
    "anthropic.AnthropicBedrock": "anthropic.AsyncAnthropicBedrock",
    "anthropic.AnthropicVertex": "anthropic.AsyncAnthropicVertex",
}
SYNC_LLM_METHODS = {"create", "parse", "stream", "count_tokens"}
LITELLM = {"completion": "acompletion", "embedding": "aembedding",
           "text_completion": "atext_completion", "responses": "aresponses",
           "image_generation": "aimage_generation", "transcription": "atranscription"}  # fmt: skip
# Agent frameworks: synchronous entry point -> its async twin.
RUNNABLE_METHODS = {"invoke": "ainvoke", "batch": "abatch", "stream": "astream",
                    "batch_as_completed": "abatch_as_completed", "predict": "apredict",
                    "predict_messages": "apredict_messages"}  # fmt: skip
RUNNABLE_NAMES = {"BaseChatModel", "BaseLanguageModel", "BaseLLM", "Runnable",
                  "RunnableSequence", "RunnableSerializable", "CompiledGraph",
                  "CompiledStateGraph", "Pregel", "init_chat_model", "create_react_agent",
                  "create_agent", "AgentExecutor"}  # fmt: skip
REENTRY = {"asyncio.run", "ray.get"}
# socket's module functions that wait on the network (a DNS lookup, a TCP handshake) -> the fix.
_LOOKUP = "await asyncio.get_running_loop().getaddrinfo(host, port)"
_REVERSE = "await asyncio.get_running_loop().getnameinfo(sockaddr)"
SOCKET_CALLS = {
    "socket.create_connection": "await asyncio.open_connection(host, port)",
    "socket.getaddrinfo": _LOOKUP, "socket.gethostbyname": _LOOKUP,
    "socket.gethostbyname_ex": _LOOKUP, "socket.gethostbyaddr": _REVERSE,
    "socket.getnameinfo": _REVERSE, "socket.getfqdn": "await asyncio.to_thread(socket.getfqdn)",
}  # fmt: skip
# Thread and process primitives whose methods wait; the asyncio twins are awaited instead.
WAITING_METHODS = {
    "concurrent.futures.Future": ({"result", "exception"}, "await asyncio.wrap_future(fut)"),
    "threading.Event": ({"wait"}, "use asyncio.Event and await event.wait()"),
    "threading.Condition": ({"wait", "wait_for", "acquire"}, "use asyncio.Condition"),
    "threading.Lock": ({"acquire"}, "use asyncio.Lock"),
    "threading.RLock": ({"acquire"}, "use asyncio.Lock"),
    "threading.Semaphore": ({"acquire"}, "use asyncio.Semaphore"),
    "threading.BoundedSemaphore": ({"acquire"}, "use asyncio.Semaphore"),
    "threading.Barrier": ({"wait"}, "use asyncio.Barrier"),
    "threading.Thread": ({"join"}, "await asyncio.to_thread(thread.join)"),
    "multiprocessing.Process": ({"join"}, "await asyncio.to_thread(proc.join)"),
    "queue.Queue": ({"get", "join"}, "use asyncio.Queue and await it"),
    "queue.SimpleQueue": ({"get"}, "use asyncio.Queue and await it"),
    "multiprocessing.Queue": ({"get"}, "await asyncio.to_thread(q.get)"),
    "socket.socket": SOCKET_WAITS,
    "socket.create_connection": SOCKET_WAITS,
    "socket.create_server": SERVER_SOCKET_WAITS,
    "ssl.SSLSocket": SOCKET_WAITS,
}
# Calls that return one of their arguments and run nothing (-> which positional argument):
# ``run_in_executor(None, cast(Callable[[], str], fn))`` hands ``fn`` over, as it should.
IDENTITY_CALLS = {
    "typing.cast": 1, "typing_extensions.cast": 1, "typing.assert_type": 0,
    "typing_extensions.assert_type": 0, "typing.reveal_type": 0,
    "typing_extensions.reveal_type": 0,
}  # fmt: skip
BLOCKING_ENGINE = {"wait", "wait_for_task", "rollout_batch", "prepare_batch", "pause", "resume",
                   "generate"}  # fmt: skip

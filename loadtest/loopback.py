"""Helpers the loadtest drivers share for services on loopback: a free port, a GET that
never raises, and a wait for a condition. Standard library only."""
import socket
import time
import urllib.error
import urllib.request


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def http_get(url, timeout=10):
    """(status, body bytes); status 0 when nothing answered."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()
    except (urllib.error.URLError, OSError):
        return 0, b""


def wait_until(pred, timeout, what, step=0.01):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pred():
            return
        time.sleep(step)
    raise RuntimeError("timed out after %.0f s waiting for %s" % (timeout, what))

"""moto's standalone S3 server, run as its own process by the tests (``python s3_server.py PORT``).

moto checks ``If-None-Match: *`` and stores the object in two separate steps, so on its threaded
server two racing conditional PUTs could both succeed, which real S3 never allows. Requests are
therefore handled one at a time (moto does all of a request's work inside the WSGI call; the
returned iterable only streams the finished response): the store then gives the guarantee AWS S3
documents (exactly one creator wins), so the tests measure lakestore, not a race inside the
test double.
"""

from __future__ import annotations

import sys
import threading

from moto.moto_server.werkzeug_app import DomainDispatcherApplication, MotoRequestHandler, create_backend_app
from werkzeug.serving import run_simple


def main() -> None:
    port = int(sys.argv[1])
    app = DomainDispatcherApplication(create_backend_app)
    one_at_a_time = threading.Lock()

    def serialised(environ, start_response):
        with one_at_a_time:
            return app(environ, start_response)

    run_simple("127.0.0.1", port, serialised, threaded=True, request_handler=MotoRequestHandler)


if __name__ == "__main__":
    main()

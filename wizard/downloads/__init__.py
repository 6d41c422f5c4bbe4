"""Downloads paid once: files resolved at plan time, fetched by hash with resume, kept in a wheelhouse.

* :mod:`~wizard.downloads.listing` reads an index's own listing (PEP 691 JSON, else PEP 503 HTML) and
  resolves pinned requirements to exact files (name, URL, sha256, size) for one Python and platform, through
  :mod:`~wizard.downloads.remote` (each page, size and metadata read once per process);
* :mod:`~wizard.downloads.metadata` reads a wheel's METADATA without downloading it (PEP 658, else HTTP range
  requests on its zip), and :mod:`~wizard.downloads.closure` resolves the requirements' whole dependency
  closure from it (markers, extras; no backtracking: a conflict is a one-line error);
* :mod:`~wizard.downloads.fetch` downloads them into the wheelhouse with HTTP range requests on a
  ``.part`` file (a kill -9, a reboot or a dropped link continues from the bytes on disk), checks each
  against its sha256, and never fetches again a file already there with the right hash
  (``python -m wizard.downloads fetch``: the action a plan's download step runs);
* :mod:`~wizard.downloads.wheelhouse` says where the wheelhouse is and shows or prunes it
  (``rocm-wizard cache``);
* :mod:`~wizard.downloads.pin` rewrites a resolved plan's pip step to download the closure's files and
  install exactly them (``pip install --no-index --find-links WHEELHOUSE --require-hashes -r REQS``).
"""

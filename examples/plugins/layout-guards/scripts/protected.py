"""The files path_guard.py protects."""
import os

PROTECTED = {".env": "holds secrets", "id_rsa": "is a private key"}


def why_protected(path):
    return PROTECTED.get(os.path.basename(path))

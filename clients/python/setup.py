"""Build hook of the dvpp package (the metadata is pyproject.toml's).

dvpp/dvpp_pb2.py, the protobuf messages, is generated, not kept in git:
`make` writes it from proto/dvpp.proto, and a package build run on a tree
where make has not run (pip install ./clients/python on a fresh clone)
generates it here with protoc (Debian: protobuf-compiler), so the wheel
always carries the module matching the tree's dvpp.proto.
"""
import os
import shutil
import subprocess

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))
PROTO = os.path.normpath(os.path.join(HERE, "..", "..", "proto", "dvpp.proto"))
OUT = os.path.join(HERE, "dvpp", "dvpp_pb2.py")


def generate_pb2():
    fresh = os.path.exists(OUT) and (not os.path.exists(PROTO) or
                                     os.path.getmtime(OUT) >= os.path.getmtime(PROTO))
    if fresh:
        return
    if not os.path.exists(PROTO):
        raise SystemExit(f"dvpp/dvpp_pb2.py is missing and {PROTO} is not there to make it "
                         f"(build from the dvppd source tree)")
    protoc = shutil.which("protoc")
    if protoc is None:
        raise SystemExit("protoc is needed to generate dvpp/dvpp_pb2.py "
                         "(Debian: apt install protobuf-compiler), or run `make` first")
    subprocess.run([protoc, f"--python_out={os.path.dirname(OUT)}",
                    f"-I{os.path.dirname(PROTO)}", PROTO], check=True)


class BuildPy(build_py):
    def run(self):
        generate_pb2()
        super().run()


setup(cmdclass={"build_py": BuildPy})

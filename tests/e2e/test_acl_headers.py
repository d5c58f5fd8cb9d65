"""The AscendCL tree of a build ($DVPP_BUILD/acl, clients/acl, docs/acl.md):
headers and exported symbols.

- Every header of runtime/include/acl compiles alone (so any may come
  first), then all of them together, as C11 (gcc, clang) and C++11 (g++,
  clang++), with -Wall -Wextra -Werror -pedantic (C also
  -Wstrict-prototypes: no f() declarations), with -DENABLE_DVPP_INTERFACE;
  without it acl_dvpp.h stops at its #error, and the other headers do not
  need it.
- The enum and constant values are the reference's numbers (a program
  prints them, compiled as C and as C++, where the ACL codes also serve
  as case labels and the enums are reachable as Name::MEMBER).
- `nm -D --defined-only` of runtime/lib64 and runtime/lib64/stub: each
  function of clients/acl/symbols.txt is exported by its library and by no
  other; a library exports nothing else (libascendcl.so also the acli_*
  bridge of clients/acl/src/acl_int.h), no dvpp_* symbol; symbols.txt and
  the headers declare the same functions; the stubs are the libraries'
  copies, with unversioned SONAMEs and libacl_dvpp.so needing
  libascendcl.so; a C++ program taking the address of every listed
  function links against runtime/lib64/stub (C linkage, no mangled name).

Skips only when the build has no ACL tree (`make` builds it).

    DVPP_BUILD=build /usr/bin/python3 -m pytest -q -p no:cacheprovider tests/e2e/test_acl_headers.py
"""
import filecmp
import os
import re
import shutil
import subprocess

import pytest

from daemon_util import BUILD, ROOT

ACL = os.path.join(ROOT, BUILD, "acl")
INCLUDE = os.path.join(ACL, "runtime", "include")
LIB64 = os.path.join(ACL, "runtime", "lib64")
LIBS = ("libascendcl", "libacl_dvpp", "libacl_cblas")
SYMBOLS = os.path.join(ROOT, "clients", "acl", "symbols.txt")

if not os.path.exists(os.path.join(INCLUDE, "acl", "acl.h")) or \
        not all(os.path.exists(os.path.join(LIB64, f"{n}.so")) for n in LIBS):
    pytest.skip(f"no AscendCL tree in {ACL} (make BUILD={BUILD} builds it)",
                allow_module_level=True)


def headers():
    """The built tree's headers as include names ("acl/acl.h", ...), in the
    source's order of folders (the tree is a copy of clients/acl's)."""
    out = []
    for d, dirs, files in os.walk(os.path.join(INCLUDE, "acl")):
        dirs.sort()
        out += [os.path.relpath(os.path.join(d, f), INCLUDE) for f in sorted(files)
                if f.endswith(".h")]
    return out


HEADERS = headers()
# A header's content the reference fixes (section 1); the test needs them all.
REQUIRED = ["acl/acl.h", "acl/acl_base.h", "acl/acl_rt.h", "acl/acl_op.h", "acl/acl_mdl.h",
            "acl/error_codes/rt_error_codes.h", "acl/error_codes/ge_error_codes.h",
            "acl/ops/acl_dvpp.h", "acl/ops/acl_cblas.h"]

WARN = ["-Wall", "-Wextra", "-Werror", "-pedantic"]
COMPILERS = {
    "gcc-c11": ["gcc", "-x", "c", "-std=c11", *WARN, "-Wstrict-prototypes"],
    "clang-c11": ["clang", "-x", "c", "-std=c11", *WARN, "-Wstrict-prototypes"],
    "g++-c++11": ["g++", "-x", "c++", "-std=c++11", *WARN],
    "clang++-c++11": ["clang++", "-x", "c++", "-std=c++11", *WARN],
}


def compiler(name):
    cmd = COMPILERS[name]
    if shutil.which(cmd[0]) is None:
        pytest.skip(f"{cmd[0]} is not installed (make deps installs it)")
    return cmd


def compile_source(name, source, *flags):
    """Syntax-check @source with compiler @name against the built headers:
    the CompletedProcess."""
    cmd = [*compiler(name), f"-I{INCLUDE}", *flags, "-fsyntax-only", "-"]
    return subprocess.run(cmd, input=source, capture_output=True, text=True, timeout=120)


# A translation unit of nothing but macros is not valid ISO C: one
# declaration keeps -pedantic quiet for rt_error_codes.h alone.
TAIL = "int acl_header_probe(void);\n"


def test_tree_has_the_reference_headers():
    assert sorted(HEADERS) == sorted(REQUIRED)
    for h in HEADERS:
        assert filecmp.cmp(os.path.join(INCLUDE, h),
                           os.path.join(ROOT, "clients", "acl", "runtime", "include", h),
                           shallow=False), h


@pytest.mark.parametrize("cc", sorted(COMPILERS))
@pytest.mark.parametrize("header", REQUIRED)
def test_header_alone(header, cc):
    r = compile_source(cc, f'#include "{header}"\n{TAIL}', "-DENABLE_DVPP_INTERFACE")
    assert r.returncode == 0, f"{header} ({cc}):\n{r.stderr}"


@pytest.mark.parametrize("cc", sorted(COMPILERS))
def test_all_headers_together(cc):
    """All of them, in order and again in reverse (include guards), and as
    the libraries see them (FUNC_VISIBILITY: exported declarations)."""
    src = "".join(f'#include "{h}"\n' for h in REQUIRED + REQUIRED[::-1]) + TAIL
    for extra in ([], ["-DFUNC_VISIBILITY", "-fvisibility=hidden"]):
        r = compile_source(cc, src, "-DENABLE_DVPP_INTERFACE", *extra)
        assert r.returncode == 0, f"{cc} {extra}:\n{r.stderr}"


@pytest.mark.parametrize("cc", sorted(COMPILERS))
def test_dvpp_header_needs_enable_dvpp_interface(cc):
    r = compile_source(cc, f'#include "acl/ops/acl_dvpp.h"\n{TAIL}')
    assert r.returncode != 0
    assert "#error" in r.stderr and "ENABLE_DVPP_INTERFACE" in r.stderr, r.stderr
    # The rest of the set does not depend on it.
    src = "".join(f'#include "{h}"\n' for h in REQUIRED if h != "acl/ops/acl_dvpp.h") + TAIL
    r = compile_source(cc, src)
    assert r.returncode == 0, r.stderr


# --- values -------------------------------------------------------------------------
def run_of(start, *names):
    """{name: start, next name: start + 1, ...}: a run of consecutive values."""
    return {n: start + i for i, n in enumerate(names)}


def prefixed(prefix, values):
    return {prefix + k: v for k, v in values.items()}


# The reference's numbers (section 2.2, 2.3, 2.4, 4.2, the version macros).
ACL_CODES = {"ACL_SUCCESS": 0, "ACL_ERROR_NONE": 0}
ACL_CODES.update(prefixed("ACL_ERROR_", {
    **run_of(100000, "INVALID_PARAM", "UNINITIALIZE", "REPEAT_INITIALIZE", "INVALID_FILE",
             "WRITE_FILE", "INVALID_FILE_SIZE", "PARSE_FILE", "FILE_MISSING_ATTR",
             "FILE_ATTR_INVALID", "INVALID_DUMP_CONFIG", "INVALID_PROFILING_CONFIG",
             "INVALID_MODEL_ID", "DESERIALIZE_MODEL", "PARSE_MODEL", "READ_MODEL_FAILURE",
             "MODEL_SIZE_INVALID", "MODEL_MISSING_ATTR", "MODEL_INPUT_NOT_MATCH",
             "MODEL_OUTPUT_NOT_MATCH", "MODEL_NOT_DYNAMIC", "OP_TYPE_NOT_MATCH",
             "OP_INPUT_NOT_MATCH", "OP_OUTPUT_NOT_MATCH", "OP_ATTR_NOT_MATCH", "OP_NOT_FOUND",
             "OP_LOAD_FAILED", "UNSUPPORTED_DATA_TYPE", "FORMAT_NOT_MATCH",
             "BIN_SELECTOR_NOT_REGISTERED", "KERNEL_NOT_FOUND",
             "BIN_SELECTOR_ALREADY_REGISTERED", "KERNEL_ALREADY_REGISTERED",
             "INVALID_QUEUE_ID", "REPEAT_SUBSCRIBE", "STREAM_NOT_SUBSCRIBE",
             "THREAD_NOT_SUBSCRIBE", "WAIT_CALLBACK_TIMEOUT", "REPEAT_FINALIZE",
             "NOT_STATIC_AIPP", "COMPILING_STUB_MODE", "GROUP_NOT_SET", "GROUP_NOT_CREATE",
             "PROF_ALREADY_RUN", "PROF_NOT_RUN", "DUMP_ALREADY_RUN", "DUMP_NOT_RUN"),
    **run_of(148046, "PROF_REPEAT_SUBSCRIBE", "PROF_API_CONFLICT",
             "INVALID_MAX_OPQUEUE_NUM_CONFIG", "INVALID_OPP_PATH", "OP_UNSUPPORTED_DYNAMIC",
             "RELATIVE_RESOURCE_NOT_CLEARED", "UNSUPPORTED_JPEG", "INVALID_BUNDLE_MODEL_ID"),
    **run_of(200000, "BAD_ALLOC", "API_NOT_SUPPORT", "INVALID_DEVICE",
             "MEMORY_ADDRESS_UNALIGNED", "RESOURCE_NOT_MATCH", "INVALID_RESOURCE_HANDLE",
             "FEATURE_UNSUPPORTED", "PROF_MODULES_UNSUPPORTED"),
    "STORAGE_OVER_LIMIT": 300000,
    **run_of(500000, "INTERNAL_ERROR", "FAILURE", "GE_FAILURE", "RT_FAILURE", "DRV_FAILURE",
             "PROFILING_FAILURE"),
}))
RT_CODES = {"ACL_RT_SUCCESS": 0}
RT_CODES.update(prefixed("ACL_ERROR_RT_", {
    "PARAM_INVALID": 107000, "INVALID_DEVICEID": 107001, "CONTEXT_NULL": 107002,
    "STREAM_CONTEXT": 107003, "STREAM_SUBSCRIBE": 107011, "THREAD_SUBSCRIBE": 107012,
    "STREAM_NO_CB_REG": 107015, "WAIT_TIMEOUT": 107019, "FEATURE_NOT_SUPPORT": 207000,
    "MEMORY_ALLOCATION": 207001, "DEVICE_OOM": 207018, "INTERNAL_ERROR": 507000,
    "REPORT_TIMEOUT": 507012, "AICPU_TIMEOUT": 507017, "AICPU_EXCEPTION": 507018,
    "STREAM_SYNC_TIMEOUT": 507046, "DRV_INTERNAL_ERROR": 507899,
    "AICPU_INTERNAL_ERROR": 507900,
}))
MACROS = {"ACL_MAJOR_VERSION": 1, "ACL_MINOR_VERSION": 10, "ACL_PATCH_VERSION": 0,
          "ACL_EVENT_SYNC": 1, "ACL_EVENT_CAPTURE_STREAM_PROGRESS": 2, "ACL_EVENT_TIME_LINE": 8}
# enum name -> {member: value}
ENUMS = {
    "aclrtRunMode": {"ACL_DEVICE": 0, "ACL_HOST": 1},
    "aclrtCallbackBlockType": {"ACL_CALLBACK_NO_BLOCK": 0, "ACL_CALLBACK_BLOCK": 1},
    "aclrtMemcpyKind": run_of(0, "ACL_MEMCPY_HOST_TO_HOST", "ACL_MEMCPY_HOST_TO_DEVICE",
                              "ACL_MEMCPY_DEVICE_TO_HOST", "ACL_MEMCPY_DEVICE_TO_DEVICE",
                              "ACL_MEMCPY_DEFAULT"),
    "aclrtMemMallocPolicy": {
        **run_of(0, "ACL_MEM_MALLOC_HUGE_FIRST", "ACL_MEM_MALLOC_HUGE_ONLY",
                 "ACL_MEM_MALLOC_NORMAL_ONLY", "ACL_MEM_MALLOC_HUGE_FIRST_P2P",
                 "ACL_MEM_MALLOC_HUGE_ONLY_P2P", "ACL_MEM_MALLOC_NORMAL_ONLY_P2P"),
        "ACL_MEM_TYPE_LOW_BAND_WIDTH": 0x0100, "ACL_MEM_TYPE_HIGH_BAND_WIDTH": 0x1000},
    "acldvppPixelFormat": prefixed("PIXEL_FORMAT_", {
        **run_of(0, "YUV_400", "YUV_SEMIPLANAR_420", "YVU_SEMIPLANAR_420",
                 "YUV_SEMIPLANAR_422", "YVU_SEMIPLANAR_422", "YUV_SEMIPLANAR_444",
                 "YVU_SEMIPLANAR_444", "YUYV_PACKED_422", "UYVY_PACKED_422",
                 "YVYU_PACKED_422", "VYUY_PACKED_422", "YUV_PACKED_444", "RGB_888", "BGR_888",
                 "ARGB_8888", "ABGR_8888", "RGBA_8888", "BGRA_8888",
                 "YUV_SEMI_PLANNER_420_10BIT", "YVU_SEMI_PLANNER_420_10BIT",
                 "YVU_PLANAR_420", "YVU_PLANAR_422", "YVU_PLANAR_444", "RGB_444", "BGR_444",
                 "ARGB_4444", "ABGR_4444", "RGBA_4444", "BGRA_4444", "RGB_555", "BGR_555",
                 "RGB_565", "BGR_565", "ARGB_1555", "ABGR_1555", "RGBA_1555", "BGRA_1555",
                 "ARGB_8565", "ABGR_8565", "RGBA_8565", "BGRA_8565"),
        **run_of(50, "RGB_BAYER_8BPP", "RGB_BAYER_10BPP", "RGB_BAYER_12BPP",
                 "RGB_BAYER_14BPP", "RGB_BAYER_16BPP"),
        **run_of(70, "BGR_888_PLANAR", "HSV_888_PACKAGE", "HSV_888_PLANAR",
                 "LAB_888_PACKAGE", "LAB_888_PLANAR", "S8C1", "S8C2_PACKAGE", "S8C2_PLANAR",
                 "S16C1", "U8C1", "U16C1", "S32C1", "U32C1", "U64C1", "S64C1"),
        **run_of(1000, "YUV_SEMIPLANAR_440", "YVU_SEMIPLANAR_440", "FLOAT32", "BUTT"),
        "UNKNOWN": 10000}),
    "acldvppStreamFormat": run_of(0, "H265_MAIN_LEVEL", "H264_BASELINE_LEVEL",
                                  "H264_MAIN_LEVEL", "H264_HIGH_LEVEL"),
    "acldvppChannelMode": {"DVPP_CHNMODE_VPC": 1, "DVPP_CHNMODE_JPEGD": 2,
                           "DVPP_CHNMODE_JPEGE": 4, "DVPP_CHNMODE_PNGD": 8},
    "acldvppBorderType": run_of(0, "BORDER_CONSTANT", "BORDER_REPLICATE", "BORDER_REFLECT",
                                "BORDER_REFLECT_101"),
    "aclvencChannelDescParamType": prefixed("ACL_VENC_", run_of(
        0, "THREAD_ID_UINT64", "CALLBACK_PTR", "PIXEL_FORMAT_UINT32", "ENCODE_TYPE_UINT32",
        "PIC_WIDTH_UINT32", "PIC_HEIGHT_UINT32", "KEY_FRAME_INTERVAL_UINT32", "BUF_ADDR_PTR",
        "BUF_SIZE_UINT32", "RC_MODE_UINT32", "SRC_RATE_UINT32", "MAX_BITRATE_UINT32",
        "MAX_IP_PROP_UINT32")),
    "acldvppJpegFormat": {**prefixed("ACL_JPEG_CSS_", run_of(0, "444", "422", "420", "GRAY",
                                                            "440", "411")),
                          "ACL_JPEG_CSS_UNKNOWN": 1000},
    "acldvppChannelDescParamType": prefixed("ACL_DVPP_", run_of(
        0, "CSC_MATRIX_UINT32", "MODE_UINT32", "CHANNEL_ID_UINT64", "CHANNEL_HEIGHT_UINT32",
        "CHANNEL_WIDTH_UINT32", "JPEGD_PRECISION_MODE_ENUM")),
    "aclvdecChannelDescParamType": prefixed("ACL_VDEC_", run_of(
        0, "CSC_MATRIX_UINT32", "OUT_MODE_UINT32", "THREAD_ID_UINT64", "CALLBACK_PTR",
        "CHANNEL_ID_UINT32", "ENCODE_TYPE_UINT32", "OUT_PIC_FORMAT_UINT32",
        "OUT_PIC_WIDTH_UINT32", "OUT_PIC_HEIGHT_UINT32", "REF_FRAME_NUM_UINT32",
        "BIT_DEPTH_UINT32")),
    "acldvppCscMatrix": prefixed("ACL_DVPP_CSC_MATRIX_", run_of(
        0, "BT601_WIDE", "BT601_NARROW", "BT709_WIDE", "BT709_NARROW", "BT2020_WIDE",
        "BT2020_NARROW")),
    "acldvppJpegdPrecisionMode": run_of(0, "ACL_YUVOUT_ALIGN_DOWN", "ACL_YUVOUT_ALIGN_UP",
                                        "ACL_YUVOUT_ALIGN_DOWN_COMPAT"),
    # What real programs use besides the reference's list (ACLLite's log
    # macros, event timing, memory info).
    "aclLogLevel": run_of(0, "ACL_DEBUG", "ACL_INFO", "ACL_WARNING", "ACL_ERROR"),
    "aclrtMemAttr": run_of(0, "ACL_DDR_MEM", "ACL_HBM_MEM", "ACL_DDR_MEM_HUGE",
                           "ACL_DDR_MEM_NORMAL", "ACL_HBM_MEM_HUGE", "ACL_HBM_MEM_NORMAL",
                           "ACL_DDR_MEM_P2P_HUGE", "ACL_DDR_MEM_P2P_NORMAL",
                           "ACL_HBM_MEM_P2P_HUGE", "ACL_HBM_MEM_P2P_NORMAL"),
    "aclrtEventStatus": run_of(0, "ACL_EVENT_STATUS_COMPLETE", "ACL_EVENT_STATUS_NOT_READY",
                               "ACL_EVENT_STATUS_RESERVED"),
    "aclrtEventRecordedStatus": run_of(0, "ACL_EVENT_RECORDED_STATUS_NOT_READY",
                                       "ACL_EVENT_RECORDED_STATUS_COMPLETE"),
}


def values_program(cxx):
    """A program printing NAME=VALUE for every expected name. In C++ it also
    reaches each enum member as Enum::MEMBER (C++11) and uses ACL_SUCCESS,
    ACL_ERROR_INVALID_PARAM and ACL_ERROR_RT_CONTEXT_NULL as case labels,
    which needs them to be constant expressions."""
    lines = [f'#include "{h}"' for h in REQUIRED] + ["#include <stdio.h>", "",
                                                     "int main(void)", "{"]
    for name in list(ACL_CODES) + list(RT_CODES) + list(MACROS):
        lines.append(f'    printf("%s=%ld\\n", "{name}", (long)({name}));')
    for enum, members in ENUMS.items():
        for m in members:
            ref = f"{enum}::{m}" if cxx else m
            lines.append(f'    {{ {enum} v = {ref}; printf("%s=%ld\\n", "{m}", (long)v); }}')
    if cxx:
        lines += ["    int code = ACL_ERROR_INVALID_PARAM;", "    switch (code) {",
                  "    case ACL_SUCCESS: return 1;", "    case ACL_ERROR_RT_CONTEXT_NULL: return 1;",
                  "    case ACL_ERROR_INVALID_PARAM: break;", "    default: return 1;", "    }"]
    lines += ["    return 0;", "}", ""]
    return "\n".join(lines)


@pytest.mark.parametrize("cc", ["gcc-c11", "g++-c++11"])
def test_values_are_the_references(cc, tmp_path):
    cxx = cc.startswith("g++")
    exe = str(tmp_path / "values")
    cmd = [*compiler(cc), f"-I{INCLUDE}", "-DENABLE_DVPP_INTERFACE", "-o", exe, "-"]
    r = subprocess.run(cmd, input=values_program(cxx), capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    r = subprocess.run([exe], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    got = dict(line.split("=") for line in r.stdout.splitlines())
    want = {**ACL_CODES, **RT_CODES, **MACROS}
    for members in ENUMS.values():
        want.update(members)
    assert {k: int(v) for k, v in got.items()} == want


def test_acl_codes_are_static_const_int():
    """The reference's constant forms: ACL codes `static const int`, the
    runtime codes plain #defines, the GE codes `static const uint32_t`."""
    with open(os.path.join(INCLUDE, "acl", "acl_base.h")) as f:
        base = f.read()
    for name, value in ACL_CODES.items():
        assert re.search(rf"\bstatic const int {name} = {value};", base), name
    with open(os.path.join(INCLUDE, "acl", "error_codes", "rt_error_codes.h")) as f:
        rt = f.read()
    for name, value in RT_CODES.items():
        assert re.search(rf"^#define {name} {value}\b", rt, re.M), name
    with open(os.path.join(INCLUDE, "acl", "error_codes", "ge_error_codes.h")) as f:
        ge = f.read()
    assert re.search(r"\bstatic const uint32_t ACL_ERROR_GE_\w+ = 145\d\d\dU?;", ge)


# --- libraries ------------------------------------------------------------------------
def symbols_txt():
    """{library: [function, ...]} from clients/acl/symbols.txt."""
    out = {n: [] for n in LIBS}
    with open(SYMBOLS) as f:
        for line in f:
            if line.strip() and not line.startswith("#"):
                lib, name = line.split()
                assert lib in out, line
                out[lib].append(name)
    return out


def exported(path):
    """The names of the functions @path exports (nm -D --defined-only), and
    every defined dynamic symbol's name."""
    r = subprocess.run(["nm", "-D", "--defined-only", path], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0, r.stderr
    funcs, every = set(), set()
    for line in r.stdout.splitlines():
        parts = line.split()
        if len(parts) == 3:
            every.add(parts[2])
            if parts[1] in "TWi":
                funcs.add(parts[2])
    return funcs, every


def declared():
    """Every function the headers declare (ACL_FUNC_VISIBILITY ... name(...))."""
    names = set()
    for h in REQUIRED:
        with open(os.path.join(INCLUDE, h)) as f:
            text = re.sub(r"/\*.*?\*/", "", f.read(), flags=re.S)
        names |= set(re.findall(r"ACL_FUNC_VISIBILITY[^;{]*?\b(acl\w+)\s*\(", text))
    return names


def test_symbols_txt_is_what_the_headers_declare():
    listed = [n for names in symbols_txt().values() for n in names]
    assert len(listed) == len(set(listed)), "a function listed twice"
    assert set(listed) == declared()


@pytest.mark.parametrize("folder", ["", "stub"])
def test_each_function_is_exported_by_its_library(folder):
    table = symbols_txt()
    for lib in LIBS:
        funcs, every = exported(os.path.join(LIB64, folder, f"{lib}.so"))
        missing = [n for n in table[lib] if n not in funcs]
        assert not missing, f"{lib}.so does not export {len(missing)}: {missing}"
        extra = sorted(n for n in funcs - set(table[lib])
                       if not (lib == "libascendcl" and n.startswith("acli_")))
        assert not extra, f"{lib}.so exports what symbols.txt does not name: {extra}"
        leaked = sorted(n for n in every if n.startswith("dvpp_") or n.startswith("dvpp__"))
        assert not leaked, f"{lib}.so exports libdvpp's {leaked[:10]}"


def test_stubs_sonames_and_needed():
    for lib in LIBS:
        real = os.path.join(LIB64, f"{lib}.so")
        assert filecmp.cmp(real, os.path.join(LIB64, "stub", f"{lib}.so"), shallow=False), lib
        r = subprocess.run(["readelf", "-d", real], capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, r.stderr
        assert re.search(rf"\(SONAME\)\s+Library soname: \[{lib}\.so\]", r.stdout), r.stdout
        needed = re.findall(r"\(NEEDED\)\s+Shared library: \[(.+?)\]", r.stdout)
        if lib != "libascendcl":
            assert "libascendcl.so" in needed, (lib, needed)
        assert not any(n.startswith(("libacl_", "libdvpp")) for n in needed), (lib, needed)


def sanitizer_flags():
    """The build's -fsanitize flags (from $(BUILD)/.flags): a program linked
    against instrumented libraries needs the sanitizer's runtime."""
    with open(os.path.join(ROOT, BUILD, ".flags")) as f:
        m = re.search(r" (-fsanitize=[a-z,]+) ", f.read())
    return [m.group(1)] if m else []


def test_cxx_program_links_every_function(tmp_path):
    names = [n for lib in LIBS for n in symbols_txt()[lib]]
    src = "".join(f'#include "{h}"\n' for h in REQUIRED) + \
        "#include <cstdio>\nint main()\n{\n" + \
        "".join(f'    std::printf("%p\\n", (void *)&{n});\n' for n in names) + \
        "    return 0;\n}\n"
    exe = str(tmp_path / "linked")
    cmd = [*compiler("g++-c++11"), "-Wno-pedantic", "-Wno-deprecated-declarations",
           *sanitizer_flags(), f"-I{INCLUDE}", "-DENABLE_DVPP_INTERFACE", "-o", exe, "-",
           f"-L{os.path.join(LIB64, 'stub')}", "-lascendcl", "-lacl_dvpp", "-lacl_cblas"]
    r = subprocess.run(cmd, input=src, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-4000:]

"""The torch ops' three descriptions of each op agree, without torch or a
GPU: the C++ schema (csrc/torch_ops.cpp's m.def), the C++ function's
argument array (the binding's slots index into it), and torch_ops's argument
tuples (from which binding() computes the slots); and every pointer
parameter of the MLA kernels' ABIs has its op argument (op_slots). With
torch installed, the Python backend's schemas are the C++ ones too."""

import os
import re
import subprocess
import sys

import pytest

import attnc
from attnc import torch_ops
from attnc_cpu_helpers import REPO

SOURCE = (REPO / "python" / "attnc" / "csrc" / "torch_ops.cpp").read_text()

#: The op argument that is the ABI's "output" (the ops name it out).
OUT = {"out": "output"}


def schema_tensors(op):
    """The tensor arguments of op's schema, in order (ABI names)."""
    match = re.search(r'm\.def\("' + op + r'\((.*?)\) -> \(\)"\);', SOURCE, re.S)
    assert match, op
    text = "".join(re.findall(r'"([^"]*)"', '"' + match.group(1) + '"'))
    names = []
    for arg in text.split(","):
        kind, name = arg.split()[0], arg.split()[-1].split("=")[0]
        if kind.startswith("Tensor"):
            names.append(OUT.get(name, name))
    return names


def array_tensors(function):
    """The tensors of the C++ function's `args` array, in order."""
    match = re.search(r"void " + function + r"\(.*?const at::Tensor \*args\[\] = \{(.*?)\};",
                      SOURCE, re.S)
    assert match, function
    names = [re.sub(r"^&|^opt\((.*)\)$", r"\1", a.strip()) for a in match.group(1).split(",")]
    return [OUT.get(n, n) for n in names]


@pytest.mark.parametrize("op,function", [
    ("preprocess", "preprocess"), ("attention", "attention"),
    ("mla_preprocess", "mlaPreprocess"), ("latent_attention", "latentAttention"),
    ("varlen_attention", "varlenAttention"), ("latent_gather", "latentGather")])
def test_three_descriptions_agree(op, function):
    args = list(torch_ops._ARGS[op])
    assert schema_tensors(op) == args
    assert array_tensors(function) == args
    # The count launchChecked is given is the array's length.
    call = re.search(r"void " + function + r"\(.*?launchChecked\(binding\(b\), args, (\d+),",
                     SOURCE, re.S)
    assert int(call.group(1)) == len(args)
    assert f'm.impl("{op}", &{function});' in SOURCE


IR = """
func.func @mla(%q: tensor<?x16x576xbf16>, %cache: tensor<?x64x576xf8E4M3FN>, %s: tensor<f32>,
    %bcache: tensor<?x64x576xbf16>, %tables: tensor<?x?xi32>, %lens: tensor<?xi32>,
    %starts: tensor<?xi32>, %qv: tensor<?x16x192xbf16>, %k: tensor<?x16x192xbf16>,
    %v: tensor<?x16x128xbf16>, %cu_q: tensor<?xi32>, %cu_k: tensor<?xi32>)
    -> (tensor<?x16x512xbf16>, tensor<?x16x128xbf16>, tensor<?x576xbf16>) {
  %o = attn.latent_attention %q, %bcache, %tables, %lens, %starts
      {kv_lora_rank = 512, softmax_scale = 0.1352 : f64}
      : tensor<?x16x576xbf16>, tensor<?x64x576xbf16>, tensor<?x?xi32>,
        tensor<?xi32>, tensor<?xi32> -> tensor<?x16x512xbf16>
  %ov = attn.varlen_attention %qv, %k, %v, %cu_q, %cu_k {softmax_scale = 0.1352 : f64}
      : tensor<?x16x192xbf16>, tensor<?x16x192xbf16>, tensor<?x16x128xbf16>,
        tensor<?xi32>, tensor<?xi32> -> tensor<?x16x128xbf16>
  %rows = attn.latent_gather %cache, %tables, %cu_k scale %s
      : tensor<?x64x576xf8E4M3FN>, tensor<?x?xi32>, tensor<?xi32> scale tensor<f32>
        -> tensor<?x576xbf16>
  return %o, %ov, %rows : tensor<?x16x512xbf16>, tensor<?x16x128xbf16>, tensor<?x576xbf16>
}
"""


@pytest.fixture(scope="module")
def mla(context):
    return attnc.compile_ir(IR, context=context)


@pytest.mark.parametrize("kind", ["latent_attention", "varlen_attention", "latent_gather"])
def test_every_parameter_has_its_argument(mla, kind):
    _, plan = mla._plan("mla", kind)
    slots = torch_ops.op_slots(plan, kind)
    args = torch_ops._ARGS[kind]
    assert [args[s] for s in slots] == [p["name"] for p in plan.pointer_params]
    # The split-KV kernels take the workspace; the fp8 gather its scale.
    expected = {"latent_attention": "workspace", "varlen_attention": "workspace",
                "latent_gather": "cache_scale"}[kind]
    assert expected in [args[s] for s in slots]


def test_a_parameter_without_an_argument_is_named(mla):
    _, plan = mla._plan("mla", "latent_gather")
    with pytest.raises(attnc.ArgumentError) as info:
        torch_ops.op_slots(plan, "latent_attention")  # no cu_seqlens argument
    assert info.value.argument == "cu_seqlens"


def normalized(schema_args):
    """(type, written, name) per argument: alias sets dropped, SymInt as
    int, defaults dropped."""
    out = []
    for arg in schema_args.split(","):
        kind, name = arg.split()[0], arg.split()[-1].split("=")[0]
        written = "!" in kind
        kind = re.sub(r"\(\w+!?\)", "", kind).replace("SymInt", "int")
        out.append((kind, written, name))
    return out


def test_python_backend_registers_the_cpp_schemas():
    """The Python custom ops (load("python"), a subprocess: registration is
    once per process) have the C++ extension's schemas."""
    pytest.importorskip("torch")
    ops = list(torch_ops._ARGS)
    script = ("import attnc.torch_ops as ops, torch\nops.load('python')\n"
              f"for n in {ops!r}:\n"
              "    print(getattr(torch.ops.attnc, n).default._schema)\n")
    env = dict(os.environ, PYTHONPATH=str(REPO / "python"))
    result = subprocess.run([sys.executable, "-c", script], capture_output=True,
                            text=True, env=env, timeout=300)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.strip().splitlines()
    assert len(lines) == len(ops)
    for op, line in zip(ops, lines):
        match = re.search(r'm\.def\("' + op + r'\((.*?)\) -> \(\)"\);', SOURCE, re.S)
        cpp = "".join(re.findall(r'"([^"]*)"', '"' + match.group(1) + '"'))
        python = re.fullmatch(r"attnc::" + op + r"\((.*)\) -> \(\)", line).group(1)
        assert normalized(python) == normalized(cpp), op

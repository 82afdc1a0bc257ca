"""Split-KV in the paged attention kernel, through Model.attention's
num_kv_splits (None: the automatic rule; else a count in 1..max_kv_splits
that the launch's workspace can hold) and workspace (a zero-filled float32
buffer for the split partials; None: the package's own):

* the same batches with the split count left automatic and forced to 1, 2, 7
  and the largest count the launch accepts (the kernel's ABI hint
  max_kv_splits, lowered to what the package takes for the batch where it
  can say), all against the float32 reference: long contexts with a
  chunked-prefill append, a 32768-key context with room for every split,
  and short sequences (1, 5, 64 keys) between long ones so that some splits
  have no key (with a window and sinks too);
* the same with counting batches (zero keys, +-1 values; see
  test_attention.make_batch) at 1, 7 and the largest split count, where a
  key dropped or counted twice at a split edge shows exactly;
* one workspace reused across launches: the same launch twice gives the same
  correct output (the kernel leaves its counters reset), and other split
  counts and another batch after it are correct too;
* out-of-range overrides (0, -1, max_kv_splits + 1, and one more than the
  workspace holds) raise attnc.ArgumentError naming num_kv_splits.

Every test here skips, saying why, when Model.attention does not take the
num_kv_splits / workspace keywords. The package's helpers (attention_splits,
attention_workspace_size) are used only where they exist. Batches and
poisoning are test_attention.py's."""

import inspect

import pytest

import attnc
from attnc_gpu_cases import BATCHES, LAYER, split_kv_cases
from attnc_gpu_reference import assert_close, torch
from test_attention import assert_keys_counted, prepare

CASES = split_kv_cases()
SPLITS = ["auto", 1, 2, 7, "max"]


def launch(prepared, **keywords):
    """prepared.launch on the decode-capable kernel (kind "attention"): on
    sm_90a the rule would take the layer's prefill kernel (no split-KV) for
    these batches at num_kv_splits None or 1 (test_attention covers it)."""
    if getattr(prepared.model, "has_prefill_attention", lambda layer: False)(LAYER):
        keywords.setdefault("kind", "attention")
    return prepared.launch(**keywords)

#: Without attention_workspace_size, the workspace is sized generously: the
#: tile height each sequence's rows are padded to (the largest block_m of
#: the attention schedule), and max_kv_splits when the ABI does not say
#: (min(64, 2 * SMs) on an H200).
MAX_BLOCK_M = 128
FALLBACK_MAX_SPLITS = 64


def _require_split_api(*names):
    parameters = inspect.signature(attnc.Model.attention).parameters
    missing = [name for name in names if name not in parameters]
    if missing:
        pytest.skip(f"attnc.Model.attention takes no {' / '.join(missing)} keyword "
                    f"(the split-KV API is not in this build)")


def _max_kv_splits(model):
    """The kernel's largest split count (ABI hints.max_kv_splits), or None."""
    hints = model.kernel(LAYER, "attention").abi.get("hints") or {}
    value = hints.get("max_kv_splits")
    return int(value) if value is not None else None


def _largest_accepted(model, prepared):
    """The largest num_kv_splits the package takes for this batch:
    max_kv_splits, lowered while attention_splits (where the package has
    it) rejects the count (the workspace holds row blocks times splits up to
    a capacity). None when the ABI has no max_kv_splits."""
    largest = _max_kv_splits(model)
    if largest is None or not hasattr(model, "attention_splits"):
        return largest
    tokens = int(prepared.batch.query.shape[0])
    seqs = int(prepared.batch.seq_lens.shape[0])
    while largest > 1:
        try:
            model.attention_splits(LAYER, tokens, seqs, num_kv_splits=largest)
            break
        except attnc.ArgumentError:
            largest -= 1
    return largest


def _automatic_count(model, prepared):
    """What the automatic rule picks for this batch (for messages), or "?"."""
    if not hasattr(model, "attention_splits"):
        return "?"
    try:
        return model.attention_splits(LAYER, int(prepared.batch.query.shape[0]),
                                      int(prepared.batch.seq_lens.shape[0]))
    except Exception as error:  # noqa: BLE001 - only for the message
        return f"? ({error})"


def _split_count(prepared, splits):
    """num_kv_splits for a SPLITS value (None for "auto"); skips counts this
    launch cannot take."""
    if splits == "auto":
        return None
    largest = _largest_accepted(prepared.model, prepared)
    if splits == "max":
        if largest is None:
            pytest.skip("the attention kernel's ABI has no hints.max_kv_splits")
        return largest
    if largest is not None and splits > largest:
        pytest.skip(f"num_kv_splits={splits} is above the {largest} this launch takes")
    return splits


def _workspace(prepared_list, max_splits):
    """A zero-filled float32 workspace: attention_workspace_size elements
    where the package says, else generously many (for every row of each
    sequence's KV groups, padded to a whole tile, and split: an fp32 partial
    output row and two softmax statistics, plus room for counters)."""
    model = prepared_list[0].model
    size = None
    if hasattr(model, "attention_workspace_size"):
        size = model.attention_workspace_size(LAYER)
    if size is None:
        size = 0
        for prepared in prepared_list:
            (_, dv), (hq, hkv) = prepared.case.dims, prepared.case.heads
            tokens = int(prepared.batch.query.shape[0])
            seqs = int(prepared.batch.seq_lens.shape[0])
            rows = tokens * hq + seqs * hkv * MAX_BLOCK_M
            size = max(size, rows * max_splits * (dv + 2) + rows + 4096)
    return torch.zeros(size, dtype=torch.float32, device="cuda")


@pytest.mark.parametrize("splits", SPLITS, ids=lambda s: f"splits{s}")
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id())
def test_forced_split_count(models, case, splits, generator):
    _require_split_api("num_kv_splits")
    prepared = prepare(models, case, generator)
    num_kv_splits = _split_count(prepared, splits)
    out = launch(prepared, num_kv_splits=num_kv_splits)
    label = num_kv_splits if num_kv_splits is not None else \
        f"None, automatic: {_automatic_count(prepared.model, prepared)}"
    assert_close(f"out (num_kv_splits={label})", out, prepared.reference(), case.dtype)


@pytest.mark.parametrize("splits", [1, 7, "max"], ids=lambda s: f"splits{s}")
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id())
def test_every_key_counted_once(models, case, splits, generator):
    """Counting batches (test_attention.make_batch): one key dropped or
    counted twice at a split edge fails, however many keys the context has."""
    _require_split_api("num_kv_splits")
    prepared = prepare(models, case, generator, counting=True)
    num_kv_splits = _split_count(prepared, splits)
    assert_keys_counted(f"out (num_kv_splits={num_kv_splits})",
                        launch(prepared, num_kv_splits=num_kv_splits), prepared)


@pytest.mark.parametrize("case", CASES[:1], ids=lambda c: c.id())
def test_workspace_reused_across_launches(models, case, generator):
    _require_split_api("num_kv_splits", "workspace")
    prepared = prepare(models, case, generator)
    other = prepare(models, case, generator, sequences=BATCHES["split_short"])
    largest = _largest_accepted(prepared.model, prepared)
    workspace = _workspace([prepared, other], _max_kv_splits(prepared.model)
                           or FALLBACK_MAX_SPLITS)
    expected = prepared.reference()
    splits = min(7, largest or 7)
    first = launch(prepared, num_kv_splits=splits, workspace=workspace)
    assert_close(f"out (first launch, {splits} splits)", first, expected, case.dtype)
    second = launch(prepared, num_kv_splits=splits, workspace=workspace)
    assert_close("out (second launch on the same workspace)", second, expected, case.dtype)
    assert torch.equal(first, second), \
        "the same launch on the reused workspace gave a different output"
    for splits in [None, 2] + ([largest] if largest else []):
        out = launch(prepared, num_kv_splits=splits, workspace=workspace)
        assert_close(f"out (num_kv_splits={splits}, reused workspace)", out, expected,
                     case.dtype)
    # another batch, some of whose splits are empty, on the same workspace
    out = launch(other, num_kv_splits=_largest_accepted(other.model, other) or 7,
                       workspace=workspace)
    assert_close("out (another batch on the reused workspace)", out, other.reference(),
                 case.dtype)


@pytest.mark.parametrize("value", [0, -1, "max+1", "capacity+1"])
@pytest.mark.parametrize("case", CASES[:1], ids=lambda c: c.id())
def test_invalid_split_count_is_rejected(models, case, value, generator):
    _require_split_api("num_kv_splits")
    prepared = prepare(models, case, generator)
    model = prepared.model
    if value == "max+1":
        maximum = _max_kv_splits(model)
        if maximum is None:
            pytest.skip("the attention kernel's ABI has no hints.max_kv_splits")
        value = maximum + 1
    elif value == "capacity+1":
        largest = _largest_accepted(model, prepared)
        if largest is None or largest == _max_kv_splits(model):
            pytest.skip("no split count below max_kv_splits is over this launch's "
                        "capacity (or the package cannot say)")
        value = largest + 1
    with pytest.raises(attnc.ArgumentError) as info:
        launch(prepared, num_kv_splits=value)
    assert info.value.argument == "num_kv_splits", str(info.value)

"""A model of the warp-specialised kernel's synchronisation
(runtime/device/attnc_attention_ws.cuh with persistent blocks; a
non-persistent block is the one-row-tile case without the tile-info slots,
which its threads look up themselves): the producer
warp and the two consumer warpgroups as agents interleaved at random, with
mbarriers (arrival counts, phases, parity waits as try_wait.parity has
them), the consumers' turn barriers (one warpgroup syncs, the other
arrives), the K/V ring whose stages and phases run on across a block's row
tiles, v_tail, and the two tile-info slots. A block's row tiles are random
(some spare, some without keys, 0..7 key tiles). Checked: no interleaving
deadlocks, and every read of a stage or slot sees the tile it expects.
The model mirrors the kernel's loops (not its code): change both together.
The mutation tests show the model catches a wrong phase and a stage
counter that restarts at each row tile."""
import random

import pytest

class MBar:
    def __init__(s, count): s.count = count; s.pending = count; s.completed = 0
    def arrive(s, n=1):
        s.pending -= n
        assert s.pending >= 0
        if s.pending == 0: s.completed += 1; s.pending = s.count
    def ready(s, parity):  # try_wait.parity: the phase of this parity completed
        return (s.completed & 1) != parity

class NamedBar:
    """bar.sync/arrive with 256 threads = 2 warpgroup units; generations."""
    def __init__(s): s.arrived = 0; s.gen = 0
    def arrive(s):
        mine = s.gen  # the generation this arrival belongs to
        s.arrived += 1
        if s.arrived == 2: s.arrived = 0; s.gen += 1
        return mine

def run(tiles_per_rowtile, stages, seed, info_parity=lambda k: (k >> 1) & 1, global_stages=True):
    rng = random.Random(seed)
    K = len(tiles_per_rowtile)
    full_k = [MBar(1) for _ in range(stages)]; full_v = [MBar(1) for _ in range(stages)]
    empty_k = [MBar(2) for _ in range(stages)]; empty_v = [MBar(2) for _ in range(stages)]
    v_tail = MBar(1)
    info_full = [MBar(1), MBar(1)]; info_empty = [MBar(2), MBar(2)]
    stage_k = [None] * stages; stage_v = [None] * stages; slots = [None, None]
    turn = [NamedBar(), NamedBar()]
    log = []

    def wait(bar, parity):
        while not bar.ready(parity):
            yield "blocked"

    def producer():
        kv_done = 0; tail_uses = 0
        for k in range(K + 1):
            more = k < K
            slot = k & 1
            if k >= 2:
                yield from wait(info_empty[slot], ((k - 2) >> 1) & 1)
            slots[slot] = (k, tiles_per_rowtile[k] if more else None)
            info_full[slot].arrive(); yield "step"
            if not more: break
            tiles = tiles_per_rowtile[k]
            if tiles is None: continue  # invalid
            for it in range(tiles):
                g = (kv_done if global_stages else 0) + it; s, use = g % stages, g // stages
                if use > 0: yield from wait(empty_k[s], (use - 1) & 1)
                stage_k[s] = g; full_k[s].arrive(); yield "step"
                if use > 0: yield from wait(empty_v[s], (use - 1) & 1)
                tail = it == tiles - 1 and rng.random() < 0.5
                if tail:
                    v_tail.arrive()  # the TMA lands on v_tail
                    yield from wait(v_tail, tail_uses & 1); tail_uses += 1
                    stage_v[s] = g; full_v[s].arrive()
                else:
                    stage_v[s] = g; full_v[s].arrive()
                yield "step"
            kv_done += tiles

    def consumer(c):
        kv_done = 0
        for k in range(K + 1):
            slot = k & 1
            yield from wait(info_full[slot], info_parity(k))
            kk, tiles = slots[slot]
            assert kk == k, (c, k, kk)
            if k == K: break
            if tiles is None:
                info_empty[slot].arrive(); continue
            if tiles > 0:
                if c == 1: turn[0].arrive()
                # tile 0: S alone
                g0 = kv_done
                yield from wait(full_k[g0 % stages], (g0 // stages) & 1)
                gen = turn[c].arrive()
                while turn[c].gen <= gen: yield "blocked"
                assert stage_k[g0 % stages] == g0
                turn[1 - c].arrive()
                empty_k[g0 % stages].arrive(); yield "step"
                for it in range(1, tiles):
                    g = kv_done + it; st, prev = g % stages, (g - 1) % stages
                    yield from wait(full_k[st], (g // stages) & 1)
                    yield from wait(full_v[prev], ((g - 1) // stages) & 1)
                    gen = turn[c].arrive()
                    while turn[c].gen <= gen: yield "blocked"
                    assert stage_k[st] == g and stage_v[prev] == g - 1, (c, g, stage_k, stage_v)
                    turn[1 - c].arrive()
                    empty_k[st].arrive(); yield "step"
                    empty_v[prev].arrive(); yield "step"
                g = kv_done + tiles - 1; last = g % stages
                yield from wait(full_v[last], (g // stages) & 1)
                gen = turn[c].arrive()
                while turn[c].gen <= gen: yield "blocked"
                assert stage_v[last] == g
                if c == 0: turn[1].arrive()
                empty_v[last].arrive(); yield "step"
            kv_done += tiles
            info_empty[slot].arrive()
            yield "step"

    agents = {"p": producer(), "c0": consumer(0), "c1": consumer(1)}
    state = {n: "step" for n in agents}
    steps = 0
    while agents:
        names = list(agents)
        rng.shuffle(names)
        progressed = False
        for n in names:
            try:
                r = next(agents[n])
            except StopIteration:
                del agents[n]; progressed = True; break
            if r == "step":
                progressed = True; break
        steps += 1
        if not progressed and steps > 100000:
            raise RuntimeError(f"deadlock: seed {seed}, key tiles {tiles_per_rowtile}")
    return True


def _blocks(count):
    for seed in range(count):
        rng = random.Random(seed)
        tiles = [None if rng.random() < 0.2 else rng.randint(0, 7) for _ in range(rng.randint(1, 6))]
        yield seed, tiles, rng.choice([2, 3])


def test_the_protocol_has_no_deadlock_and_reads_in_order():
    for seed, tiles, stages in _blocks(600):
        assert run(tiles, stages, seed)


def test_the_model_catches_a_wrong_info_phase():
    with pytest.raises((RuntimeError, AssertionError)):
        for seed, tiles, stages in _blocks(600):
            run(tiles, stages, seed, info_parity=lambda k: k & 1)


def test_the_model_catches_stages_that_restart_each_row_tile():
    with pytest.raises((RuntimeError, AssertionError)):
        for seed, tiles, stages in _blocks(600):
            run(tiles, stages, seed, global_stages=False)

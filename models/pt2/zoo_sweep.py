"""models/pt2/zoo_sweep.py OUT.json [NAME...] — the stock zoo through flopwise.analyze(module) as a torch 2.x user
calls it (torch.export in-process, the compiled package of scripts/modern_python.sh), each against torch itself:
parameters (sum of numel), contraction MACs the dispatcher runs (generate.ContractionCounter) and FlopCounterMode's
total (with the CPU attention kernel's products added, as tests/test_export_programs.cc does). Every torchvision
classification, segmentation and video model, and transformers models of many families built from small configs
(random weights, no downloads). Run in the modern root:
    bash scripts/modern_torch.sh sh -c 'PYTHONPATH=build-modern/python python3 models/pt2/zoo_sweep.py build/zoo.json'
Writes one row per model (figures, or the stage that failed and its first line) and prints a summary. A row is
"ok" when all three figures equal torch's; "export" when torch.export itself refused the model."""
import json
import os
import sys
import time
import traceback

import torch
from torch.utils.flop_counter import FlopCounterMode

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import generate  # noqa: E402

import flopwise  # noqa: E402

torch.manual_seed(0)


def torch_counts(model, args, kwargs):
    flop, macs = FlopCounterMode(display=False), generate.ContractionCounter()
    with flop:
        model(*args, **kwargs)
    with macs:
        model(*args, **kwargs)
    kinds = macs.by_kind
    if any(v is None for v in kinds.values()):
        return None, None
    uncovered = 2 * (kinds.get("sdpa", 0) + kinds.get("_grouped_mm", 0))
    return flop.get_total_flops() + uncovered, sum(kinds.values())


def vision_cases():
    import torchvision.models as tvm
    out = []
    for name in tvm.list_models(module=tvm):
        size = 224 if name.startswith(("vit", "swin", "maxvit")) else 64
        if name == "googlenet":
            size = 96
        if name.startswith("inception"):  # train mode's aux head pools a 17x17 map: 299 in, as torchvision says
            size = 299
        size = (28 if name.endswith("_14") else 32) if name.startswith("vit") else size  # a multiple of the patch
        kw = {"image_size": size} if name.startswith("vit") else {}
        batch = 2 if name.startswith("inception") else 1  # train mode: its aux head batch-norms a 1x1 map
        out.append((name, lambda n=name, kw=kw: tvm.get_model(n, weights=None, **kw), (batch, 3, size, size)))
    for name in tvm.list_models(module=tvm.segmentation):
        kw = {"weights_backbone": None, "num_classes": 5}
        if "aux_loss" in tvm.segmentation.__dict__.get(name, lambda: 0).__code__.co_varnames:
            kw["aux_loss"] = False
        # batch 2: train mode's ASPP pooling batch-norms a 1x1 map (DeepLabV3)
        out.append((name, lambda n=name, kw=kw: tvm.get_model(n, weights=None, **kw), (2, 3, 64, 64)))
    for name in tvm.list_models(module=tvm.video):
        shape = (1, 3, 8, 112, 112) if name.startswith(("s3d", "mvit", "swin3d")) else (1, 3, 4, 56, 56)
        if name.startswith(("mvit", "s3d")):  # S3D's last pool takes 2x7x7 of a 16x224x224 clip's features
            shape = (1, 3, 16, 224, 224)
        out.append((name, lambda n=name: tvm.get_model(n, weights=None, num_classes=10), shape))
    return [(n, make, (lambda s=s: ((torch.randn(*s),), {}))) for n, make, s in out]


TEXT = dict(vocab_size=512, hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=128,
            max_position_embeddings=128)


def hf_cases():
    import transformers as tf

    def ids(b=2, s=12):
        return torch.randint(0, 500, (b, s))

    def causal(cls, cfg_cls, **cfg):
        return (cls, lambda: getattr(tf, cls)(getattr(tf, cfg_cls)(**{**TEXT, **cfg})).eval(),
                lambda: ((ids(),), {}))

    cases = [
        causal("LlamaForCausalLM", "LlamaConfig", num_key_value_heads=2),
        causal("MistralForCausalLM", "MistralConfig", num_key_value_heads=2),
        causal("Qwen2ForCausalLM", "Qwen2Config", num_key_value_heads=2),
        causal("Qwen3ForCausalLM", "Qwen3Config", num_key_value_heads=2, head_dim=16),
        causal("GemmaForCausalLM", "GemmaConfig", num_key_value_heads=1, head_dim=16),
        causal("Gemma2ForCausalLM", "Gemma2Config", num_key_value_heads=2, head_dim=16),
        causal("PhiForCausalLM", "PhiConfig"),
        causal("Phi3ForCausalLM", "Phi3Config", pad_token_id=0),
        causal("OlmoForCausalLM", "OlmoConfig"),
        causal("StableLmForCausalLM", "StableLmConfig", num_key_value_heads=4),
        causal("GPTNeoXForCausalLM", "GPTNeoXConfig"),
        causal("MixtralForCausalLM", "MixtralConfig", num_key_value_heads=2, num_local_experts=4, num_experts_per_tok=2),
        causal("Qwen2MoeForCausalLM", "Qwen2MoeConfig", num_key_value_heads=2, num_experts=4, num_experts_per_tok=2,
               moe_intermediate_size=32, shared_expert_intermediate_size=64),
        causal("BertModel", "BertConfig"),
        causal("RobertaModel", "RobertaConfig"),
        causal("DistilBertModel", "DistilBertConfig", dim=64, n_layers=2, n_heads=4, hidden_dim=128),
        causal("ElectraModel", "ElectraConfig", embedding_size=32),
        causal("AlbertModel", "AlbertConfig", embedding_size=32),
        causal("DebertaV2Model", "DebertaV2Config"),
        ("GPT2LMHeadModel", lambda: tf.GPT2LMHeadModel(tf.GPT2Config(vocab_size=512, n_positions=128, n_embd=64,
                                                                       n_layer=2, n_head=4)).eval(),
         lambda: ((ids(),), {})),
        ("OPTForCausalLM", lambda: tf.OPTForCausalLM(tf.OPTConfig(vocab_size=512, hidden_size=64, num_hidden_layers=2,
                                                                    ffn_dim=128, num_attention_heads=4,
                                                                    word_embed_proj_dim=64)).eval(),
         lambda: ((ids(),), {})),
        ("BloomForCausalLM", lambda: tf.BloomForCausalLM(tf.BloomConfig(vocab_size=512, hidden_size=64, n_layer=2,
                                                                          n_head=4)).eval(),
         lambda: ((ids(),), {})),
        ("FalconForCausalLM", lambda: tf.FalconForCausalLM(tf.FalconConfig(vocab_size=512, hidden_size=64,
                                                                             num_hidden_layers=2,
                                                                             num_attention_heads=4)).eval(),
         lambda: ((ids(),), {})),
        ("T5ForConditionalGeneration",
         lambda: tf.T5ForConditionalGeneration(tf.T5Config(vocab_size=512, d_model=64, d_kv=16, d_ff=128,
                                                            num_layers=2, num_heads=4)).eval(),
         lambda: ((ids(),), {"decoder_input_ids": ids(2, 5)})),
        ("BartForConditionalGeneration",
         lambda: tf.BartForConditionalGeneration(tf.BartConfig(vocab_size=512, d_model=64, encoder_layers=2,
                                                               decoder_layers=2, encoder_attention_heads=4,
                                                               decoder_attention_heads=4, encoder_ffn_dim=128,
                                                               decoder_ffn_dim=128,
                                                               max_position_embeddings=128)).eval(),
         lambda: ((ids(),), {"decoder_input_ids": ids(2, 5)})),
        ("ViTModel", lambda: tf.ViTModel(tf.ViTConfig(hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                                                      intermediate_size=128, image_size=32, patch_size=8)).eval(),
         lambda: ((torch.randn(1, 3, 32, 32),), {})),
        ("SwinModel", lambda: tf.SwinModel(tf.SwinConfig(image_size=64, patch_size=4, embed_dim=16, depths=[1, 1],
                                                         num_heads=[2, 4], window_size=4)).eval(),
         lambda: ((torch.randn(1, 3, 64, 64),), {})),
        ("ConvNextModel", lambda: tf.ConvNextModel(tf.ConvNextConfig(hidden_sizes=[16, 32], depths=[1, 1],
                                                                     num_stages=2)).eval(),
         lambda: ((torch.randn(1, 3, 64, 64),), {})),
        ("CLIPModel", lambda: tf.CLIPModel(tf.CLIPConfig(
            text_config=dict(vocab_size=512, hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                             intermediate_size=128, max_position_embeddings=32),
            vision_config=dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=128,
                               image_size=32, patch_size=8), projection_dim=32)).eval(),
         lambda: ((ids(2, 10), torch.randn(2, 3, 32, 32)), {})),
        ("WhisperModel", lambda: tf.WhisperModel(tf.WhisperConfig(vocab_size=512, d_model=64, encoder_layers=2,
                                                                  decoder_layers=2, encoder_attention_heads=4,
                                                                  decoder_attention_heads=4, encoder_ffn_dim=128,
                                                                  decoder_ffn_dim=128, num_mel_bins=16,
                                                                  max_source_positions=30,
                                                                  max_target_positions=32, pad_token_id=0,
                                                                  bos_token_id=1, eos_token_id=2,
                                                                  decoder_start_token_id=1)).eval(),
         lambda: ((torch.randn(1, 16, 60),), {"decoder_input_ids": ids(1, 5)})),
    ]
    return cases


def run_case(name, make, inputs):
    row = {"model": name}
    t0 = time.time()
    try:
        model = make()
        args, kwargs = inputs()
    except Exception as e:  # noqa: BLE001
        return {**row, "status": "build", "why": f"{type(e).__name__}: {str(e).splitlines()[0][:200]}"}
    try:
        ep = None
        if kwargs:  # keyword inputs: exported here as analyze(module) would (its cache object off)
            extra = {"use_cache": False} if flopwise._returns_hf_cache(model) else {}
            ep = torch.export.export(model, args, {**kwargs, **extra}, strict=False)
    except Exception as e:  # noqa: BLE001
        return {**row, "status": "export", "why": f"{type(e).__name__}: {str(e).splitlines()[0][:200]}"}
    try:  # a module with positional inputs as users call it: analyze(model, inputs), the export in flopwise
        r = flopwise.analyze(ep) if kwargs else flopwise.analyze(model, args)
        rt = flopwise.analyze(ep, convention="torch") if kwargs else flopwise.analyze(model, args, convention="torch")
    except Exception as e:  # noqa: BLE001
        return {**row, "status": "flopwise", "why": f"{type(e).__name__}: {str(e).splitlines()[0][:300]}",
                "trace": traceback.format_exc(limit=2)[-400:]}
    try:
        flops, macs = torch_counts(model, args, kwargs)
    except Exception as e:  # noqa: BLE001
        return {**row, "status": "eager", "why": f"{type(e).__name__}: {str(e).splitlines()[0][:200]}"}
    params = sum(p.numel() for p in model.parameters())
    row.update(params=[r.totals.params, params], macs=[r.totals.macs, macs], flops=[rt.totals.flops, flops],
               seconds=round(time.time() - t0, 1),
               uncounted=r.totals.uncounted_nodes, warnings=len(r.to_dict().get("warnings", [])))
    same = all(a == b for a, b in (row["params"], row["macs"], row["flops"]))
    row["status"] = "ok" if same else "differs"
    return row


def main():
    out, names = sys.argv[1], set(sys.argv[2:])
    cases = vision_cases() + hf_cases()
    rows = []
    for name, make, inputs in cases:
        if names and name not in names:
            continue
        row = run_case(name, make, inputs)
        rows.append(row)
        print(json.dumps(row), file=sys.stderr, flush=True)
        with open(out, "w") as f:
            json.dump(rows, f, indent=1)
    by = {}
    for r in rows:
        by.setdefault(r["status"], []).append(r["model"])
    print({k: len(v) for k, v in by.items()}, file=sys.stderr)
    for k in ("differs", "flopwise"):
        if k in by:
            print(k, by[k], file=sys.stderr)


if __name__ == "__main__":
    main()

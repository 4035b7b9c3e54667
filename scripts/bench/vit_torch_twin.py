#!/usr/bin/python3
"""The Python PyTorch twin of an attnzoo ViT: torchvision's VisionTransformer with the same
hyperparameters, timed the same way (forward, backward, AdamW step on one fixed batch).
Prints one JSON line like `attnzoo bench`. Run with Debian's /usr/bin/python3 (python3-torch 1.13)."""
import argparse, json, statistics, time

import torch
import torch.nn.functional as F
from torchvision.models.vision_transformer import VisionTransformer

p = argparse.ArgumentParser()
for name, default in [("image_size", 28), ("in_channels", 1), ("patch_size", 7), ("d_model", 128), ("depth", 6),
                      ("num_heads", 4), ("mlp_dim", 256), ("num_classes", 10), ("batch_size", 128),
                      ("steps", 30), ("warmup", 5), ("repeats", 3), ("threads", 2)]:
    p.add_argument("--" + name, type=int, default=default)
p.add_argument("--precision", choices=["fp32", "bf16"], default="fp32")
p.add_argument("--label_smoothing", type=float, default=0.1)
a = p.parse_args()

torch.set_num_threads(a.threads)
model = VisionTransformer(image_size=a.image_size, patch_size=a.patch_size, num_layers=a.depth,
                          num_heads=a.num_heads, hidden_dim=a.d_model, mlp_dim=a.mlp_dim, num_classes=a.num_classes)
# torchvision hard-codes 3 input channels; match the data's channel count as attnzoo does.
model.conv_proj = torch.nn.Conv2d(a.in_channels, a.d_model, kernel_size=a.patch_size, stride=a.patch_size)
model.train()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.05)
images = torch.randn(a.batch_size, a.in_channels, a.image_size, a.image_size)
labels = torch.randint(a.num_classes, (a.batch_size,))


def step():
    with torch.autocast("cpu", dtype=torch.bfloat16, enabled=a.precision == "bf16"):
        logits = model(images)
    loss = F.cross_entropy(logits.float(), labels, label_smoothing=a.label_smoothing)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    loss.item()


for _ in range(a.warmup):
    step()
rates = []
for _ in range(a.repeats):
    start = time.perf_counter()
    for _ in range(a.steps):
        step()
    rates.append(a.steps * a.batch_size / (time.perf_counter() - start))
print(json.dumps({"impl": "pytorch", "model": "torchvision VisionTransformer", "precision": a.precision,
                  "threads": torch.get_num_threads(), "batch_size": a.batch_size,
                  "parameters": sum(t.numel() for t in model.parameters()),
                  "median_examples_per_second": round(statistics.median(rates), 1),
                  "min_examples_per_second": round(min(rates), 1)}))

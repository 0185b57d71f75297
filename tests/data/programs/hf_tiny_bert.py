"""A transformers BERT with one tiny layer, random weights, varying batch and sequence length."""

import torch
from _common import compile_fn
from transformers import BertConfig, BertModel

config = BertConfig(vocab_size=64, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                    intermediate_size=32, max_position_embeddings=64)
model = BertModel(config).eval()
compiled = compile_fn(model)
with torch.no_grad():
    for batch, seq in ((2, 8), (3, 8), (3, 12), (4, 16)):
        ids = torch.randint(0, 64, (batch, seq))
        compiled(input_ids=ids, attention_mask=torch.ones(batch, seq, dtype=torch.long))

"""Hand migrations for bench/migrate.py: what a person porting each script to
today's torch would change, as edit lists, never copies of the scripts.

``HAND_EDITS[Script.key]`` is a list of ``(line, old text, new text)``: on that
1-based line of the pinned original, the first ``old text`` becomes ``new
text`` (which may hold a line break). A script missing here needs no change:
it runs warning-free as written. Each edit was written by reading the script
with the torch 0.4 migration guide
(https://pytorch.org/blog/pytorch-0_4_0-migration-guide/) and the torch 2.6
``torch.load`` notes at hand, not from torchlint's output; each keeps what the
script printed under torch 0.3.
"""

from typing import Dict, List, Tuple

_ITEM = ("loss.data[0]", "loss.item()")
_SUM = ("size_average=False", "reduction='sum'")
_MEAN = ("size_average=True", "reduction='mean'")

HAND_EDITS: Dict[str, List[Tuple[int, str, str]]] = {
    # --- jcjohnson/pytorch-examples -------------------------------------------------
    "jcjohnson/pytorch-examples:autograd/two_layer_net_autograd.py": [(52, *_ITEM)],
    "jcjohnson/pytorch-examples:autograd/two_layer_net_custom_function.py": [
        (21, "  def forward(self, input):", "  @staticmethod\n  def forward(ctx, input):"),
        (27, "self.save_for_backward", "ctx.save_for_backward"),
        (30, "  def backward(self, grad_output):", "  @staticmethod\n  def backward(ctx, grad_output):"),
        (36, "self.saved_tensors", "ctx.saved_tensors"),
        (60, "relu = MyReLU()", "relu = MyReLU.apply"),
        (68, *_ITEM),
    ],
    "jcjohnson/pytorch-examples:nn/two_layer_net_nn.py": [(36, *_SUM), (49, *_ITEM)],
    "jcjohnson/pytorch-examples:nn/two_layer_net_optim.py": [(30, *_SUM), (44, *_ITEM)],
    "jcjohnson/pytorch-examples:nn/two_layer_net_module.py": [(48, *_SUM), (56, *_ITEM)],
    "jcjohnson/pytorch-examples:nn/dynamic_net.py": [(57, *_SUM), (65, *_ITEM)],
    # --- hunkim/PyTorchZeroToAll -----------------------------------------------------
    "hunkim/PyTorchZeroToAll:05_linear_regression.py": [(34, *_SUM), (44, *_ITEM)],
    "hunkim/PyTorchZeroToAll:06_logistic_regression.py": [(34, *_MEAN), (44, *_ITEM)],
    "hunkim/PyTorchZeroToAll:07_diabets_logistic.py": [(45, *_MEAN), (55, *_ITEM)],
    "hunkim/PyTorchZeroToAll:08_2_dataset_loade_logistic.py": [(66, *_MEAN), (83, *_ITEM)],
    "hunkim/PyTorchZeroToAll:12_2_hello_rnn.py": [
        (77, "idx.data[0]", "idx.item()"),
        # Iterating a 1-D tensor gives 0-dim elements since 0.4; the loss wants a batch of one.
        (78, "criterion(output, label)", "criterion(output, label.unsqueeze(0))"),
        (80, *_ITEM),
    ],
    "hunkim/PyTorchZeroToAll:12_3_hello_rnn_seq.py": [(83, *_ITEM)],
    "hunkim/PyTorchZeroToAll:12_4_hello_rnn_emb.py": [(72, *_ITEM)],
    # --- MorvanZhou/PyTorch-Tutorial ---------------------------------------------------
    # ``dot`` flattened its operands before 0.4 (the comment expects 30.0).
    "MorvanZhou/PyTorch-Tutorial:tutorial-contents/201_torch_numpy.py": [
        (62, "tensor.dot(tensor)", "tensor.view(-1).dot(tensor.view(-1))"),
    ],
    "MorvanZhou/PyTorch-Tutorial:tutorial-contents/301_regression.py": [(59, *_ITEM)],
    # The whole module was pickled by this script: it is trusted, and weights_only=True cannot read it.
    "MorvanZhou/PyTorch-Tutorial:tutorial-contents/304_save_reload.py": [
        (52, "torch.load('net.pkl')", "torch.load('net.pkl', weights_only=False)"),
    ],
    "MorvanZhou/PyTorch-Tutorial:tutorial-contents/306_optimizer.py": [
        (30, "Data.TensorDataset(data_tensor=x, target_tensor=y)", "Data.TensorDataset(x, y)"),
        (77, *_ITEM),
    ],
    "MorvanZhou/PyTorch-Tutorial:tutorial-contents/406_GAN.py": [(70, "retain_variables=True", "retain_graph=True")],
    "MorvanZhou/PyTorch-Tutorial:tutorial-contents/406_conditional_GAN.py": [
        (78, "retain_variables=True", "retain_graph=True"),
    ],
    "MorvanZhou/PyTorch-Tutorial:tutorial-contents/503_dropout.py": [
        (26, "Variable(test_x, volatile=True), Variable(test_y, volatile=True)", "test_x, test_y"),
        (88, ").data[0]", ").item()"),
        (89, ").data[0]", ").item()"),
    ],
    "MorvanZhou/PyTorch-Tutorial:tutorial-contents/504_batch_normalization.py": [
        (42, "Variable(torch.from_numpy(test_x).float(), volatile=True)", "torch.from_numpy(test_x).float()"),
        (43, "Variable(torch.from_numpy(test_y).float(), volatile=True)", "torch.from_numpy(test_y).float()"),
        (45, "Data.TensorDataset(data_tensor=train_x, target_tensor=train_y)", "Data.TensorDataset(train_x, train_y)"),
        (75, "init.normal(", "init.normal_("),
        (76, "init.constant(", "init.constant_("),
        (123, ").data[0]", ").item()"),
    ],
    # --- kuangliu/pytorch-cifar ----------------------------------------------------------
    # Python 2's integer division: torch 0.3 truncated float sizes, torch 2 refuses them.
    "kuangliu/pytorch-cifar:models/shufflenet.py": [(21, "C/g", "C//g"), (29, "out_planes/4", "out_planes//4")],
    # --- pytorch/examples, yunjey/pytorch-tutorial --------------------------------------
    "pytorch/examples:regression/main.py": [(55, "output.data[0]", "output.item()")],
    "yunjey/pytorch-tutorial:tutorials/01-basics/linear_regression/main.py": [(54, *_ITEM)],
}

"""Blame's planted bug in one of torch's own post-grad passes: a pattern registered in Inductor's post-grad
pattern pass (pass_patterns[1]) rewrites cos into sin."""
import torch
from torch._inductor.fx_passes.post_grad import pass_patterns
from torch._inductor.pattern_matcher import CallFunction, KeywordArg, Match, register_graph_pattern

aten = torch.ops.aten


@register_graph_pattern(CallFunction(aten.cos.default, KeywordArg("x")), pass_dict=pass_patterns[1])
def cos_as_sin(match: Match, x):
    def repl(x):
        return aten.sin.default(x)

    match.replace_by_example(repl, [x])


def f(x):
    return x.cos() * 2.0 + x.relu()


torch.manual_seed(0)
print(float(torch.compile(f)(torch.randn(64)).sum()))

"""session.fx_names.aot_input_names: what each AOT graph input holds, from AOTAutograd's notes beside the inputs."""

from __future__ import annotations

from inductor_step.session.fx_names import aot_input_names, dynamo_input_path

JOINT = '''class inner_f(torch.nn.Module):
    def forward(
        self,
        primals,
        tangents,
    ):
        primals_1: "f32[24, 3, 3, 3][27, 9, 3, 1]cpu"  # PlainAOTInput(idx=0)
        primals_2: "f32[2, 3, 64, 64][12288, 4096, 64, 1]cpu"  # PlainAOTInput(idx=1)
        primals_3: "i64[][]cpu"  # PlainAOTInput(idx=2)
        primals_4: "f32[8][1]cpu",  # ParamAOTInput(target='head.fc.bias')
        tangents_1: "f32[2, 10][10, 1]cpu"  # TangentAOTInput(output=PlainAOTOutput(idx=0))
'''
DYNAMO = [{"name": "l_self_modules_conv1_modules_0_parameters_weight_", "op": "placeholder",
           "target": "L_self_modules_conv1_modules_0_parameters_weight_"},
          {"name": "l_x_", "op": "placeholder", "target": "L_x_"},
          {"name": "l_self_modules_conv1_modules_1_buffers_num_batches_tracked_", "op": "placeholder",
           "target": "L_self_modules_conv1_modules_1_buffers_num_batches_tracked_"},
          {"name": "conv2d", "op": "call_function", "target": "torch.conv2d"}]


def test_inputs_named_by_dynamo_input_index_and_param_target():
    names = aot_input_names({"joint": JOINT}, DYNAMO)
    assert names == {"primals_1": "conv1.0.weight", "primals_2": "L_x_", "primals_3": "conv1.1.num_batches_tracked",
                     "primals_4": "head.fc.bias"}


def test_no_notes_no_names_and_an_index_past_dynamos_inputs_is_left_out():
    assert aot_input_names({"forward": 'primals_1: "f32[4]"\n'}, DYNAMO) == {}
    assert aot_input_names({"forward": '        primals_9: "f32[4]"  # PlainAOTInput(idx=9)\n'}, DYNAMO) == {}
    assert aot_input_names(None, None) == {}


def test_dynamo_input_path_keeps_a_passed_modules_name():
    assert dynamo_input_path("L_model_modules_norm_parameters_weight_") == "model.norm.weight"
    assert dynamo_input_path("G_net_modules_blocks_modules_0_buffers_mask_") == "net.blocks.0.mask"
    assert dynamo_input_path("L_kwargs_input_ids_") == "L_kwargs_input_ids_"

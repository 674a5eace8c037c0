"""The tiers of the test suite: ``make test`` runs every test but those marked ``extended``,
``make test-extended`` only those, and CI (``.ci/run``) both. A whole file of the extended tier
says so in its ``pytestmark``, a single test in its decorators; this module names the cases of
parametrized tests and the tests that tests/conftest.py marks (``EXTENDED``)."""

from __future__ import annotations

#: Cases ``make test`` leaves to ``make test-extended`` (marked ``extended`` here; whole files
#: say so in their ``pytestmark``): one more plan, split or variant of a scenario whose other
#: cases ``make test`` runs, each costing seconds of micro-batches. CI runs both tiers.
EXTENDED = {
    # the keyed plan's case stays; the distributed plan runs these shapes in make test's
    # test_distributed_graphs, test_flink_edge_scenarios (parallelism 2) and test_connected_streams
    "spark/test_stream_graphs.py::test_an_input_resuming_behind_the_unions_watermark_is_left_out"
    "_until_it_catches_up[distributed]",
    "spark/test_connected_streams.py::test_a_keyed_co_process_function_gates_one_stream_by_the"
    "_others_state_across_a_restart[distributed]",
    "spark/test_connected_streams.py::test_the_distributed_plan_refuses_to_read_a_watermark_it"
    "_cannot_tell_from_min_long[filter]",
    "spark/test_graph_mapped_sources.py::test_a_union_of_a_mapped_and_a_plain_source_gives_the"
    "_unmapped_programs_outputs[distributed]",
    # more micro-batch splits (make test keeps one batch, per element and 2+1+5)
    "spark/test_runtime_modes.py::test_window_function_sees_arrival_order_whatever_the_micro"
    "_batch_split[3+5]",
    "spark/test_runtime_modes.py::test_static_input_in_streaming_mode_sees_arrival_order_whatever"
    "_the_partitioning[3+5]",
    "spark/test_process_functions_spark.py::test_keyed_process_function_results_do_not_depend_on"
    "_micro_batches[two and the rest]",
    # packed outputs: the window chain's count-1 case stays
    "spark/test_packed_outputs.py::test_packed_results_equal_the_unpacked_stages_batch_by_batch"
    "[sliding]",
    "spark/test_packed_outputs.py::test_a_graph_ending_in_sliding_windows_packs_with_the_same_rows",
    # the watermark's firing case stays
    "spark/test_column_types.py::test_an_int_window_sum_fired_by_a_late_element_wraps_as_flinks"
    "_or_fails_under_ansi",
    # a warning of restarts on Spark's watermark of several sources (a legacy path)
    "spark/test_graph_restart_safety.py::test_a_restart_on_sparks_watermark_of_several_sources"
    "_warns_that_their_clocks_are_lost",
    # combining before the shuffle: sum, overflow, null keys and one key shape's restart stay
    "spark/test_combine_before_shuffle.py::test_combined_stream_equals_element_by_element[max]",
    "spark/test_combine_before_shuffle.py::test_a_checkpoint_restarts_with_combining_switched_on"
    "_or_off[keys1]",
    "spark/test_combine_before_shuffle.py::test_a_checkpoint_restarts_with_combining_switched_on"
    "_or_off[keys2]",
}

__all__ = ["EXTENDED"]

"""The public names of PyFlink 2.3.0's ``pyflink.datastream`` and ``pyflink.common`` modules,
read from the modules of the ``apache-flink`` 2.3.0 package (Apache License 2.0): each module's
``__all__`` and the other names it defines at top level, which programs import as well (a custom
assigner copied from PyFlink's ``window.py`` imports ``T``, ``W`` and ``mod_inverse``)."""

from __future__ import annotations

#: module -> its public names
PYFLINK_MODULES: dict[str, list[str]] = {
    "pyflink.datastream": [
        "StreamExecutionEnvironment", "DataStream", "KeyedStream", "WindowedStream",
        "ConnectedStreams", "BroadcastStream", "BroadcastConnectedStream",
        "AsyncDataStream", "DataStreamSink", "MapFunction", "CoMapFunction",
        "FlatMapFunction", "CoFlatMapFunction", "ReduceFunction", "FilterFunction",
        "ProcessFunction", "KeyedProcessFunction", "CoProcessFunction",
        "KeyedCoProcessFunction", "WindowFunction", "ProcessWindowFunction",
        "AggregateFunction", "BroadcastProcessFunction", "KeyedBroadcastProcessFunction",
        "AsyncFunction", "RuntimeContext", "TimerService", "CheckpointingMode",
        "CheckpointConfig", "ExternalizedCheckpointRetention", "StateBackend",
        "HashMapStateBackend", "EmbeddedRocksDBStateBackend", "CustomStateBackend",
        "PredefinedOptions", "CheckpointStorage", "JobManagerCheckpointStorage",
        "FileSystemCheckpointStorage", "CustomCheckpointStorage", "RuntimeExecutionMode",
        "Window", "TimeWindow", "CountWindow", "GlobalWindow", "WindowAssigner",
        "MergingWindowAssigner", "TriggerResult", "Trigger", "TimeDomain", "KeySelector",
        "Partitioner", "SourceFunction", "SinkFunction", "SlotSharingGroup", "MemorySize",
        "OutputTag", "AsyncRetryPredicate", "AsyncRetryStrategy",
    ],
    "pyflink.datastream.async_data_stream": [
        "AsyncDataStream",
    ],
    "pyflink.datastream.async_retry_predicates": [
        "empty_result_predicate", "has_exception_predicate", "exception_type_predicate",
    ],
    "pyflink.datastream.async_retry_strategies": [
        "RetryPredicate", "NoRetryStrategy", "FixedDelayRetryStrategy",
        "ExponentialBackoffDelayRetryStrategy", "OUT", "NO_RETRY_STRATEGY",
    ],
    "pyflink.datastream.checkpoint_config": [
        "CheckpointConfig",
    ],
    "pyflink.datastream.checkpoint_storage": [
        "CheckpointStorage", "JobManagerCheckpointStorage", "FileSystemCheckpointStorage",
        "CustomCheckpointStorage",
    ],
    "pyflink.datastream.checkpointing_mode": [
        "CheckpointingMode",
    ],
    "pyflink.datastream.data_stream": [
        "CloseableIterator", "DataStream", "KeyedStream", "ConnectedStreams",
        "WindowedStream", "DataStreamSink", "BroadcastStream", "BroadcastConnectedStream",
        "WINDOW_STATE_NAME", "CachedDataStream", "AllWindowedStream",
    ],
    "pyflink.datastream.execution_mode": [
        "RuntimeExecutionMode",
    ],
    "pyflink.datastream.externalized_checkpoint_retention": [
        "ExternalizedCheckpointRetention",
    ],
    "pyflink.datastream.functions": [
        "RuntimeContext", "MapFunction", "CoMapFunction", "FlatMapFunction",
        "CoFlatMapFunction", "ReduceFunction", "AggregateFunction", "KeySelector",
        "FilterFunction", "Partitioner", "SourceFunction", "SinkFunction",
        "ProcessFunction", "CoProcessFunction", "KeyedProcessFunction",
        "KeyedCoProcessFunction", "TimerService", "WindowFunction", "AllWindowFunction",
        "ProcessWindowFunction", "ProcessAllWindowFunction",
        "BaseBroadcastProcessFunction", "BroadcastProcessFunction",
        "KeyedBroadcastProcessFunction", "AsyncFunction", "AsyncFunctionDescriptor",
        "AsyncRetryPredicate", "AsyncRetryStrategy", "W", "W2", "IN", "IN1", "IN2", "OUT",
        "KEY", "KeyedStateStore", "Function", "NullByteKeySelector", "FunctionWrapper",
        "ReduceFunctionWrapper", "JavaFunctionWrapper", "PassThroughWindowFunction",
        "PassThroughAllWindowFunction", "InternalWindowFunction",
        "InternalSingleValueWindowFunction", "InternalSingleValueAllWindowFunction",
        "InternalIterableWindowFunction", "InternalIterableAllWindowFunction",
        "InternalProcessWindowContext", "InternalProcessAllWindowContext",
        "InternalSingleValueProcessWindowFunction",
        "InternalSingleValueProcessAllWindowFunction",
        "InternalIterableProcessWindowFunction",
        "InternalIterableProcessAllWindowFunction",
    ],
    "pyflink.datastream.output_tag": [
        "OutputTag",
    ],
    "pyflink.datastream.slot_sharing_group": [
        "MemorySize", "SlotSharingGroup",
    ],
    "pyflink.datastream.state": [
        "ValueStateDescriptor", "ValueState", "ListStateDescriptor", "ListState",
        "MapStateDescriptor", "MapState", "ReducingStateDescriptor", "ReducingState",
        "AggregatingStateDescriptor", "AggregatingState", "ReadOnlyBroadcastState",
        "BroadcastState", "StateTtlConfig", "OperatorStateStore", "T", "K", "V", "IN",
        "OUT", "State", "AppendingState", "MergingState", "StateDescriptor",
    ],
    "pyflink.datastream.state_backend": [
        "StateBackend", "HashMapStateBackend", "EmbeddedRocksDBStateBackend",
        "CustomStateBackend", "PredefinedOptions",
    ],
    "pyflink.datastream.stream_execution_environment": [
        "StreamExecutionEnvironment",
    ],
    "pyflink.datastream.time_domain": [
        "TimeDomain",
    ],
    "pyflink.datastream.timerservice": [
        "TimerService",
    ],
    "pyflink.datastream.utils": [
        "ResultTypeQueryable", "create_hadoop_configuration", "create_java_properties",
        "convert_to_python_obj", "pickled_bytes_to_python_obj",
    ],
    "pyflink.datastream.window": [
        "Window", "TimeWindow", "CountWindow", "GlobalWindow", "WindowAssigner",
        "TumblingProcessingTimeWindows", "TumblingEventTimeWindows",
        "SlidingProcessingTimeWindows", "SlidingEventTimeWindows",
        "ProcessingTimeSessionWindows", "EventTimeSessionWindows",
        "DynamicProcessingTimeSessionWindows", "DynamicEventTimeSessionWindows",
        "GlobalWindows", "MergingWindowAssigner", "CountTumblingWindowAssigner",
        "CountSlidingWindowAssigner", "TriggerResult", "Trigger", "EventTimeTrigger",
        "ProcessingTimeTrigger", "ContinuousEventTimeTrigger",
        "ContinuousProcessingTimeTrigger", "NeverTrigger", "PurgingTrigger",
        "CountTrigger", "TimeWindowSerializer", "CountWindowSerializer",
        "GlobalWindowSerializer", "SessionWindowTimeGapExtractor",
        "long_to_int_with_bit_mixing", "mod_inverse", "T", "W", "W2", "IN", "OUT", "KEY",
        "WindowOperationDescriptor", "Min",
    ],
    "pyflink.common": [
        "Configuration", "ConfigOption", "ConfigOptions", "ExecutionConfig",
        "TypeInformation", "TypeSerializer", "Types", "SerializationSchema",
        "DeserializationSchema", "SimpleStringSchema", "ByteArraySchema", "Encoder",
        "CompletableFuture", "InputDependencyConstraint", "JobClient",
        "JobExecutionResult", "JobID", "JobStatus", "RestartStrategies",
        "RestartStrategyConfiguration", "Row", "RowKind", "WatermarkStrategy", "Duration",
        "Instant", "Time", "AssignerWithPeriodicWatermarksWrapper",
    ],
    "pyflink.common.completable_future": [
        "CompletableFuture",
    ],
    "pyflink.common.config_options": [
        "ConfigOptions", "ConfigOption", "T",
    ],
    "pyflink.common.configuration": [
        "Configuration",
    ],
    "pyflink.common.constants": [
        "MAX_LONG_VALUE", "MIN_LONG_VALUE", "DEFAULT_OUTPUT_TAG",
    ],
    "pyflink.common.execution_config": [
        "ExecutionConfig",
    ],
    "pyflink.common.input_dependency_constraint": [
        "InputDependencyConstraint",
    ],
    "pyflink.common.io": [
        "InputFormat",
    ],
    "pyflink.common.job_client": [
        "JobClient",
    ],
    "pyflink.common.job_execution_result": [
        "JobExecutionResult",
    ],
    "pyflink.common.job_id": [
        "JobID",
    ],
    "pyflink.common.job_status": [
        "JobStatus",
    ],
    "pyflink.common.restart_strategy": [
        "RestartStrategies", "RestartStrategyConfiguration",
    ],
    "pyflink.common.serialization": [
        "SerializationSchema", "DeserializationSchema", "SimpleStringSchema",
        "ByteArraySchema", "Encoder", "BulkWriterFactory", "RowFieldExtractorSchema",
        "RowDataBulkWriterFactory",
    ],
    "pyflink.common.serializer": [
        "TypeSerializer", "T", "void", "VoidNamespaceSerializer",
    ],
    "pyflink.common.time": [
        "Duration", "Instant", "Time",
    ],
    "pyflink.common.typeinfo": [
        "TypeInformation", "Types", "BasicType", "BasicTypeInfo", "InstantTypeInfo",
        "SqlTimeTypeInfo", "PrimitiveArrayTypeInfo", "BasicArrayTypeInfo",
        "ObjectArrayTypeInfo", "PickledBytesTypeInfo", "RowTypeInfo", "TupleTypeInfo",
        "DateTypeInfo", "TimeTypeInfo", "TimestampTypeInfo", "ListTypeInfo",
        "MapTypeInfo", "LocalTimeTypeInfo", "ExternalTypeInfo",
    ],
    "pyflink.common.types": [
        "Row", "RowKind",
    ],
    "pyflink.common.utils": [
        "JavaObjectWrapper",
    ],
    "pyflink.common.watermark_strategy": [
        "WatermarkStrategy", "TimestampAssigner", "AssignerWithPeriodicWatermarksWrapper",
    ],
}

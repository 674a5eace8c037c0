"""Triggers, one concept per module, named as in Flink."""

from flinkwin.triggers.base import OnMergeContext, Trigger, TriggerContext, TriggerResult
from flinkwin.triggers.continuous_event_time import ContinuousEventTimeTrigger
from flinkwin.triggers.continuous_processing_time import ContinuousProcessingTimeTrigger
from flinkwin.triggers.count import CountTrigger
from flinkwin.triggers.delta import DeltaTrigger
from flinkwin.triggers.event_time import EventTimeTrigger
from flinkwin.triggers.never import EndOfStreamTrigger, NeverTrigger
from flinkwin.triggers.processing_time import ProcessingTimeTrigger
from flinkwin.triggers.purging import PurgingTrigger

__all__ = [
    "ContinuousEventTimeTrigger",
    "ContinuousProcessingTimeTrigger",
    "CountTrigger",
    "DeltaTrigger",
    "EndOfStreamTrigger",
    "EventTimeTrigger",
    "NeverTrigger",
    "OnMergeContext",
    "ProcessingTimeTrigger",
    "PurgingTrigger",
    "Trigger",
    "TriggerContext",
    "TriggerResult",
]

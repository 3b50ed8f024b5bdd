"""Scheduled jobs (digests, approval expiry, re-index repair) that call the Bot service."""

from scheduler.jobs import JOBS, Clock, JobSpec, run_job
from scheduler.runner import ScheduledJob, Scheduler, utc_now

__all__ = ["JOBS", "Clock", "JobSpec", "ScheduledJob", "Scheduler", "run_job", "utc_now"]

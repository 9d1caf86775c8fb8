"""The hostile-input driver's categories of issue 26 (``bench_hostile_inputs.py`` runs them).

``calls``: argument aliasing, captured-value mutation between calls (both caches),
integer overflow and division by zero, huge shapes, ``generic_op`` descriptors.
``processes``: ``emit`` reruns, signals, the pytest plugin's options, threads on one
device.  Each category yields ``(name, case)``; a case returns a description when it
was handled, raises a Tilewright error when it was refused cleanly, and raises
``WrongAnswer`` (given by the driver) for a silent wrong answer.
"""

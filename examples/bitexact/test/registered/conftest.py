"""Hands pytest's `record_property` to the guards, so a measured KL lands in the test report.

Under plain `python3 FILE -f` this file is not loaded and the guards only print their values.
"""

import pytest


@pytest.fixture(autouse=True)
def _publish_kl(request):
    instance = getattr(request, "instance", None)
    # Only guards ask for record_property: other tests stay free of report properties.
    if instance is not None and hasattr(instance, "record_kl"):
        instance._record = request.getfixturevalue("record_property")
    yield

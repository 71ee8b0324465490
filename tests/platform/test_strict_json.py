"""Platform files and type libraries are read as strictly as options files (one decoder)."""
import pytest

from hdeeprm.errors import PlatformError
from hdeeprm.platform import load_platform
from hdeeprm.platform.library import TypeLibrary


@pytest.mark.parametrize("text, message", [
    ('{"clusters": [],\n "clusters": []}', "key 'clusters' must appear once in its object, got it twice "
                                           "(JSON would keep the last silently) ({p}:2)"),
    ('{"clusters": NaN}', "numbers must be finite JSON numbers (RFC 8259), got NaN ({p})"),
    ('{"clusters": 1e400}', "numbers must fit a double, got 1e400 ({p})"),
])
def test_platform_json_refuses_duplicate_keys_and_non_finite_numbers(tmp_path, text, message):
    path = tmp_path / "p.json"
    path.write_text(text)
    with pytest.raises(PlatformError) as info:
        load_platform(path)
    assert str(info.value) == message.format(p=path)


def test_a_type_library_with_a_key_twice_is_refused_with_its_line(tmp_path):
    path = tmp_path / "lib.json"
    path.write_text('{"processor": {\n  "X": {"gflops_per_core": 1},\n  "X": {"gflops_per_core": 2}}}')
    with pytest.raises(PlatformError, match=r"key 'X' must appear once in its object, got it twice .*lib.json:3\)"):
        TypeLibrary.load([path])

# SPDX-License-Identifier: Apache-2.0
"""Jinja filters for the template: ``camel`` turns ``math_verify`` into ``MathVerify``."""

from cookiecutter.utils import simple_filter


@simple_filter
def camel(value: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in str(value).split("_") if part)

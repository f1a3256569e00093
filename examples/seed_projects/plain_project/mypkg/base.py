# SPDX-License-Identifier: Apache-2.0
class BaseThing:
    pass

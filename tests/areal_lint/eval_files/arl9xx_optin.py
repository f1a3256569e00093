# ARG --arl-enable=ARL901,ARL902
class Workflow:
    def __init__(self, tokenizer):
        self.tokenizer = tokenizer
        self.cache = None

    async def arun_episode(self, engine, data):
        ids = self.tokenizer.apply_chat_template(data["messages"])  # ARL901: apply_chat_template
        self.last = ids  # ARL902: last
        if self.cache is None:
            self.cache = {}
        return ids

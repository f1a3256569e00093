class Workflow:
    def __init__(self, tokenizer):
        self.tokenizer = tokenizer

    async def arun_episode(self, engine, data):
        ids = self.tokenizer.apply_chat_template(data["messages"])
        self.last = ids
        return ids
